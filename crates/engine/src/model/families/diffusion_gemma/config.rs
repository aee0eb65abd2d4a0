//! DiffusionGemma's canvas loop parameters: `canvas_length` from config.json, the denoising keys
//! of generation_config.json (transformers' `DiffusionGemmaGenerationConfig`), with
//! transformers' defaults where the file leaves one out, checked so that a value the loop cannot
//! run with fails at load with what to change.

use std::path::Path;

use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::DenoisingParams;

/// transformers' defaults (`_get_default_generation_params`) and config default canvas.
const DEFAULT_CANVAS: usize = 256;
const DEFAULT_STEPS: usize = 48;
const DEFAULT_ENTROPY_BOUND: f64 = 0.1;
const DEFAULT_T_MIN: f64 = 0.4;
const DEFAULT_T_MAX: f64 = 0.8;
const DEFAULT_STABILITY: usize = 1;
const DEFAULT_CONFIDENCE: f64 = 0.005;

/// What the loop accepts: a canvas is a few hundred tokens (DiffusionGemma's is 256), a canvas
/// takes tens of steps (48 at most as released).
pub const CANVAS_RANGE: (usize, usize) = (1, 4096);
pub const STEPS_RANGE: (usize, usize) = (1, 1024);

/// The parameters from `root` (config.json) and `folder`'s generation_config.json, if any.
pub fn denoising_params(root: &Value, folder: &Path) -> Result<DenoisingParams> {
    let config_path = folder.join("config.json");
    let canvas_length = whole(root.get("canvas_length"), "canvas_length", &config_path)?.unwrap_or(DEFAULT_CANVAS);
    in_range(canvas_length, CANVAS_RANGE, "canvas_length", &config_path, "DiffusionGemma's is 256")?;

    let path = folder.join("generation_config.json");
    let generation = match std::fs::read_to_string(&path) {
        Ok(text) => serde_json::from_str(&text).map_err(|e| EngineError::ModelFormat {
            path: path.clone(),
            reason: format!("generation_config.json is not valid JSON ({e})"),
        })?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Value::Null,
        Err(e) => return Err(EngineError::io(&path, e)),
    };
    let g = |key: &str| generation.get(key).filter(|v| !v.is_null());
    let max_steps = whole(g("max_denoising_steps"), "max_denoising_steps", &path)?.unwrap_or(DEFAULT_STEPS);
    in_range(max_steps, STEPS_RANGE, "max_denoising_steps", &path, "DiffusionGemma ships 48")?;
    let entropy_bound = number(g("sampler_config").and_then(|s| s.get("entropy_bound")), "sampler_config.entropy_bound", &path)?
        .unwrap_or(DEFAULT_ENTROPY_BOUND);
    positive(entropy_bound, "sampler_config.entropy_bound", &path)?;
    let t_min = number(g("t_min"), "t_min", &path)?.unwrap_or(DEFAULT_T_MIN);
    let t_max = number(g("t_max"), "t_max", &path)?.unwrap_or(DEFAULT_T_MAX);
    if t_min < 0.0 || t_max <= t_min {
        return Err(bad(&path, format!("t_min {t_min} and t_max {t_max} do not make a falling temperature; set 0 ≤ t_min < t_max (DiffusionGemma ships 0.4 and 0.8)")));
    }
    let stability_threshold = whole(g("stability_threshold"), "stability_threshold", &path)?.unwrap_or(DEFAULT_STABILITY);
    if stability_threshold > max_steps {
        return Err(bad(
            &path,
            format!("stability_threshold {stability_threshold} exceeds max_denoising_steps {max_steps}; set it between 0 and {max_steps}"),
        ));
    }
    let confidence_threshold = number(g("confidence_threshold"), "confidence_threshold", &path)?.unwrap_or(DEFAULT_CONFIDENCE);
    positive(confidence_threshold, "confidence_threshold", &path)?;
    Ok(DenoisingParams {
        canvas_length,
        max_steps,
        entropy_bound: entropy_bound as f32,
        t_min: t_min as f32,
        t_max: t_max as f32,
        stability_threshold,
        confidence_threshold: confidence_threshold as f32,
    })
}

fn bad(path: &Path, reason: String) -> EngineError {
    EngineError::ModelFormat { path: path.into(), reason }
}

/// A non-negative whole number, where given.
fn whole(value: Option<&Value>, key: &str, path: &Path) -> Result<Option<usize>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => {
            v.as_u64().map(|n| Some(n as usize)).ok_or_else(|| bad(path, format!("`{key}` is {v}; it must be a whole number (0 or more)")))
        }
    }
}

fn number(value: Option<&Value>, key: &str, path: &Path) -> Result<Option<f64>> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v.as_f64().filter(|x| x.is_finite()).map(Some).ok_or_else(|| bad(path, format!("`{key}` is {v}; it must be a number"))),
    }
}

fn in_range(value: usize, (low, high): (usize, usize), key: &str, path: &Path, hint: &str) -> Result<()> {
    if (low..=high).contains(&value) {
        return Ok(());
    }
    Err(bad(path, format!("`{key}` {value} is out of range; set it between {low} and {high} ({hint})")))
}

fn positive(value: f64, key: &str, path: &Path) -> Result<()> {
    if value > 0.0 {
        return Ok(());
    }
    Err(bad(path, format!("`{key}` {value} must be above 0")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params_with(config: Value, generation: Option<Value>) -> Result<DenoisingParams> {
        let dir = tempfile::tempdir().unwrap();
        if let Some(g) = generation {
            std::fs::write(dir.path().join("generation_config.json"), g.to_string()).unwrap();
        }
        denoising_params(&config, dir.path())
    }

    #[test]
    fn transformers_defaults_fill_what_the_files_leave_out() {
        let p = params_with(json!({}), None).unwrap();
        assert_eq!((p.canvas_length, p.max_steps, p.stability_threshold), (256, 48, 1));
        assert_eq!((p.entropy_bound, p.t_min, p.t_max, p.confidence_threshold), (0.1, 0.4, 0.8, 0.005));
        let p = params_with(
            json!({"canvas_length": 8}),
            Some(json!({"max_denoising_steps": 12, "sampler_config": {"_cls_name": "EntropyBoundSamplerConfig", "entropy_bound": 0.5}})),
        )
        .unwrap();
        assert_eq!((p.canvas_length, p.max_steps, p.entropy_bound), (8, 12, 0.5));
    }

    #[test]
    fn values_the_loop_cannot_run_with_are_refused_saying_what_to_set() {
        let err = |c: Value, g: Value| params_with(c, Some(g)).unwrap_err().to_string();
        assert!(err(json!({"canvas_length": 0}), json!({})).contains("`canvas_length` 0 is out of range; set it between 1 and 4096"));
        assert!(err(json!({}), json!({"max_denoising_steps": 0})).contains("`max_denoising_steps` 0 is out of range"));
        assert!(err(json!({}), json!({"max_denoising_steps": 5000})).contains("set it between 1 and 1024"));
        assert!(err(json!({}), json!({"max_denoising_steps": -3})).contains("must be a whole number"));
        assert!(err(json!({}), json!({"t_min": 0.9, "t_max": 0.5})).contains("0 ≤ t_min < t_max"));
        assert!(err(json!({}), json!({"sampler_config": {"entropy_bound": 0.0}})).contains("must be above 0"));
        assert!(err(json!({}), json!({"max_denoising_steps": 4, "stability_threshold": 5})).contains("between 0 and 4"));
    }
}
