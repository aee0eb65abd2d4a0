//! Sampling over the model's defaults, and the reply's token limit: the checks every front door
//! makes, written once.

use confab_engine::{SamplingChoices, SamplingParams};

use crate::error::TurnError;

/// The model's defaults (its generation_config.json) with the turn's choices over them,
/// checked, so that a bad setting is refused naming it before anything runs. A token limit of
/// 0 means "to the context's end", which the engine resolves.
pub fn sampling_params(defaults: &SamplingParams, choices: &SamplingChoices) -> Result<SamplingParams, TurnError> {
    let params = defaults.with_choices(choices);
    let checked = SamplingParams { max_tokens: params.max_tokens.max(1), ..params.clone() };
    checked.validate(usize::MAX)?;
    Ok(params)
}

/// The most tokens a reply may have, as a front door received it.
pub fn reply_token_limit(value: i64) -> Result<u32, TurnError> {
    u32::try_from(value).ok().filter(|&limit| limit >= 1).ok_or(TurnError::ReplyTokens { value })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reply_needs_room_for_one_token() {
        assert_eq!(reply_token_limit(7).unwrap(), 7);
        for bad in [0, -1, i64::from(u32::MAX) + 1] {
            assert!(matches!(reply_token_limit(bad), Err(TurnError::ReplyTokens { value }) if value == bad));
        }
    }

    #[test]
    fn choices_go_over_the_defaults_and_are_checked() {
        let defaults = SamplingParams { temperature: 0.6, top_k: 20, ..SamplingParams::default() };
        let params = sampling_params(&defaults, &SamplingChoices { temperature: Some(0.0), ..Default::default() }).unwrap();
        assert_eq!((params.temperature, params.top_k), (0.0, 20));
        let bad = SamplingChoices { temperature: Some(-1.0), ..Default::default() };
        assert!(matches!(sampling_params(&defaults, &bad), Err(TurnError::Engine(_))));
    }
}
