//! The batched decode step: every prefilled row of one model feeds its unfed token, one forward
//! pass runs for the batch, and each row chooses its next token (under its grammar's mask,
//! computed while the pass runs).

use std::sync::atomic::Ordering;
use std::time::Instant;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, transforms, Array};

use super::speculative::speculative_step;
use super::{argmax, tokens_array, Row, Unfed, NEXT_STEP};
use crate::constraint::{Guide, TokenMask};
use crate::error::{EngineError, Result};
use crate::model::{Compute, Input, Positions, Rows};
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::ModelId;
use crate::state::SequenceState;

/// One decode step for every row (all prefilled, all of one model): each row's unfed token
/// goes in, one forward pass for the batch (or one per row where the model cannot batch),
/// and each row chooses its next token. When every row is greedy the choices stay on the
/// device and are read after the next step is queued; otherwise they are sampled now.
/// Where rows speculate and some have proposals, the step verifies them instead
/// (`speculative_step`); `draft_of` finds a row's draft model.
pub fn decode_step<'m>(model: &'m ReadyModel, draft_of: &dyn Fn(ModelId) -> Option<&'m ReadyModel>, rows: &mut [&mut Row]) -> Result<()> {
    tracing::trace!(rows = rows.len(), "decode step");
    // A denoising model's rows each take a denoising step of their own.
    if model.model.denoiser().is_some() {
        return rows.iter_mut().try_for_each(|row| row.denoise_step(model));
    }
    if speculative_step(model, draft_of, rows)? {
        return Ok(());
    }
    // Grammar jump pays when a row steps alone; in a batch, forced tokens go one per step.
    let alone = rows.len() == 1;
    for row in rows.iter_mut() {
        match row.unfed.take() {
            Some(Unfed::Jump(tokens)) if !alone => {
                row.queued.extend(&tokens[1..]);
                row.unfed = Some(Unfed::Known(tokens[0]));
            }
            Some(Unfed::Known(token)) if alone && !row.queued.is_empty() => {
                row.unfed = Some(Unfed::Jump(std::iter::once(token).chain(row.queued.drain(..)).collect()));
            }
            unfed => row.unfed = unfed,
        }
    }
    // Rows that feed one token step together; a row that feeds a sampled token and the tokens
    // its grammar forced after it (grammar jump) runs its own forward pass of all of them.
    let single: Vec<usize> = (0..rows.len()).filter(|&i| !matches!(rows[i].unfed, Some(Unfed::Jump(_)))).collect();
    let input = match single.is_empty() {
        true => None,
        false => Some(single_input(rows, &single)?),
    };

    let logits = if single.len() == rows.len() {
        let input = input.as_ref().expect("every row feeds one token");
        forward_single(model, rows.iter_mut().map(|r| &mut r.state).collect(), input)?
    } else {
        let mut each: Vec<Option<Array>> = vec![None; rows.len()];
        if let Some(input) = &input {
            let states = rows.iter_mut().enumerate().filter(|(i, _)| single.contains(i)).map(|(_, r)| &mut r.state).collect();
            let logits = forward_single(model, states, input)?;
            for (k, &i) in single.iter().enumerate() {
                each[i] = Some(logits.index(k as i32..k as i32 + 1));
            }
        }
        for (i, row) in rows.iter_mut().enumerate() {
            if let Some(Unfed::Jump(tokens)) = &row.unfed {
                each[i] = Some(model.model.logits(&tokens_array(tokens), &mut row.state)?);
            }
        }
        let each: Vec<Array> = each.into_iter().map(|l| l.expect("every row has logits")).collect();
        ops::concatenate(&each, 0)?
    };
    let pipelined = rows.iter().all(|r| r.pipelined);
    let next = if pipelined {
        let next = argmax(&logits)?;
        transforms::async_eval([&next])?;
        Some(next)
    } else {
        None
    };

    // What was fed: tokens already streamed, or the previous step's choices, read now.
    let mut fed_values: Option<Vec<u32>> = None;
    for (i, row) in rows.iter_mut().enumerate() {
        let token = match row.unfed.take() {
            Some(Unfed::Known(t)) => t,
            Some(Unfed::Jump(tokens)) => {
                row.fed.extend_from_slice(&tokens);
                continue;
            }
            _ => {
                let values = match &fed_values {
                    Some(v) => v,
                    None => {
                        let input = input.as_ref().expect("a row fed a chosen token");
                        input.eval()?;
                        fed_values.insert(input.as_slice::<u32>().to_vec())
                    }
                };
                let slot = single.iter().position(|&s| s == i).expect("a row fed one token");
                let token = values[slot];
                row.fed.push(token);
                row.accept(model, token)?;
                continue;
            }
        };
        row.fed.push(token);
    }

    // Grammars' next masks, computed while the step runs.
    if next.is_none() && rows.iter().any(|r| r.guide.is_some() && r.stopped.is_none()) {
        masks_during(&logits, rows)?;
    }

    let step = NEXT_STEP.fetch_add(1, Ordering::Relaxed);
    for (i, row) in rows.iter_mut().enumerate() {
        if row.stopped.is_some() {
            continue;
        }
        match &next {
            Some(tokens) => row.unfed = Some(Unfed::Pending { tokens: tokens.clone(), row: i, step }),
            None if !row.queued.is_empty() => {
                row.unfed = row.queued.pop_front().map(Unfed::Known);
                row.forced_stepped += 1;
            }
            None => {
                let mask = row.mask.take().transpose();
                let chosen = mask.and_then(|mask| row.sampler.sample_masked(&logits.index(i as i32), &row.history, mask.as_ref()));
                // A grammar's dead end ends its own row; the others go on.
                if let Err(e) = chosen.and_then(|token| row.take(model, token)) {
                    row.fail_later(e);
                }
            }
        }
    }
    Ok(())
}

/// The tokens rows `which` feed, [which.len(), 1]: the previous step's choices as they are
/// when those rows are all of its rows, in order; else gathered row by row.
fn single_input(rows: &[&mut Row], which: &[usize]) -> Result<Array> {
    let whole = match rows.first().and_then(|r| r.unfed.as_ref()) {
        Some(Unfed::Pending { tokens, step, .. }) if which.len() == rows.len() && tokens.dim(0) as usize == rows.len() => {
            let same = rows
                .iter()
                .enumerate()
                .all(|(i, r)| matches!(&r.unfed, Some(Unfed::Pending { row, step: s, .. }) if *row == i && s == step));
            same.then(|| tokens.clone())
        }
        _ => None,
    };
    let input = match whole {
        Some(tokens) => tokens,
        None => {
            let pieces = which
                .iter()
                .map(|&i| match &rows[i].unfed {
                    Some(Unfed::Known(t)) => Ok(Array::from_slice(&[*t], &[1])),
                    Some(Unfed::Pending { tokens, row, .. }) => {
                        Ok(tokens.index(*row as i32..*row as i32 + 1).as_dtype(mlx_rs::Dtype::Uint32)?)
                    }
                    Some(Unfed::Jump(_)) | None => Err(EngineError::Internal("a decoding row has no single token to feed".into())),
                })
                .collect::<Result<Vec<_>>>()?;
            if pieces.len() == 1 {
                pieces.into_iter().next().expect("one row")
            } else {
                ops::concatenate(&pieces, 0)?
            }
        }
    };
    Ok(input.reshape(&[which.len() as i32, 1])?)
}

/// One decode step of one token per row: batched where the model can, else row by row.
fn forward_single(model: &ReadyModel, mut states: Vec<&mut SequenceState>, input: &Array) -> Result<Array> {
    if states.len() == 1 {
        return model.model.logits(input, states[0]);
    }
    if model.model.accepts().batches {
        return model.model.forward(Input::Tokens(input), Rows::Batch(&mut states), Compute::Logits(Positions::Last))?.into_logits();
    }
    let mut each = Vec::with_capacity(states.len());
    for (i, state) in states.into_iter().enumerate() {
        each.push(model.model.logits(&input.index(i as i32..i as i32 + 1), state)?);
    }
    Ok(ops::concatenate(&each, 0)?)
}

/// Computes the next mask of every constrained row still going, on worker threads, while MLX
/// evaluates `logits` (queued first, so the forward pass and the masks overlap); returns once
/// both are done. Each row keeps its mask, or its grammar's error, in `Row::mask`.
pub(super) fn masks_during(logits: &Array, rows: &mut [&mut Row]) -> Result<()> {
    let mut work: Vec<(&mut Guide, &mut Option<Result<TokenMask>>)> = rows
        .iter_mut()
        .filter(|r| r.stopped.is_none() && r.queued.is_empty())
        .filter_map(|r| {
            let Row { guide, mask, .. } = &mut **r;
            guide.as_mut().map(|g| (g, mask))
        })
        .collect();
    if work.is_empty() {
        return Ok(());
    }
    transforms::async_eval([logits])?;
    let began = Instant::now();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).min(work.len());
    let per_worker = work.len().div_ceil(workers);
    let evaluated = std::thread::scope(|scope| {
        for share in work.chunks_mut(per_worker) {
            scope.spawn(move || {
                for (guide, mask) in share.iter_mut() {
                    **mask = Some(guide.mask());
                }
            });
        }
        let evaluated = logits.eval();
        tracing::trace!(us = began.elapsed().as_micros() as u64, "forward pass done; waiting for masks");
        evaluated
    });
    tracing::trace!(us = began.elapsed().as_micros() as u64, rows = work.len(), "masks ready");
    Ok(evaluated?)
}
