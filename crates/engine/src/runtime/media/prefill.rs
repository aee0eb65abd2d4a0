//! Prefill for a prompt with media: chunks that never split an image, and each chunk's input
//! embeddings (the text model's own, with the media rows replaced by tower outputs; a video's
//! rows fill its frame groups' runs in order, the text between them keeps its own).

use std::ops::Range;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use crate::error::{EngineError, Result};
use crate::media::MediaKind;
use crate::model::{Compute, EmbeddingsInput, Input, Positions, Rows};
use crate::runtime::media::encode::MediaOutputs;
use crate::runtime::media::prompt::MediaPrompt;
use crate::runtime::ready_model::ReadyModel;
use crate::state::SequenceState;

/// Splits `start..end` into chunks of about `chunk` positions; a chunk that would end inside
/// one of `whole` (image soft-token ranges) is extended to that range's end.
pub fn chunk_ranges(start: usize, end: usize, chunk: usize, whole: &[Range<usize>]) -> Vec<Range<usize>> {
    let chunk = chunk.max(1);
    let mut ranges = Vec::new();
    let mut at = start;
    while at < end {
        let mut stop = (at + chunk).min(end);
        while let Some(r) = whole.iter().find(|r| r.start < stop && stop < r.end) {
            stop = r.end.min(end);
        }
        ranges.push(at..stop);
        at = stop;
    }
    ranges
}

/// `ranges` further split at each of `boundaries` inside them.
pub fn split_at(ranges: Vec<Range<usize>>, boundaries: &[usize]) -> Vec<Range<usize>> {
    let mut out = Vec::with_capacity(ranges.len() + boundaries.len());
    for range in ranges {
        let mut start = range.start;
        let mut inside: Vec<usize> = boundaries.iter().copied().filter(|&b| range.start < b && b < range.end).collect();
        inside.sort_unstable();
        inside.dedup();
        for b in inside {
            out.push(start..b);
            start = b;
        }
        out.push(start..range.end);
    }
    out
}

/// The image soft-token ranges of a prompt (audio and video are read causally and may be split).
pub fn image_ranges(prompt: &MediaPrompt) -> Vec<Range<usize>> {
    prompt.items.iter().filter(|i| i.kind == MediaKind::Image).map(|i| i.range()).collect()
}

/// Positions `start..end` of a chunk, and for media rows the item and the first of its rows there.
type Piece = (usize, usize, Option<(usize, usize)>);

/// Runs one chunk of a media prompt through the model; logits of its last position.
pub fn forward_chunk(
    model: &ReadyModel,
    prompt: &MediaPrompt,
    outputs: &MediaOutputs,
    range: Range<usize>,
    state: &mut SequenceState,
) -> Result<Array> {
    let pad = model
        .model
        .accepts()
        .media_pad_id
        .ok_or_else(|| EngineError::invalid("input", format!("{} takes token ids only", model.config().arch)))?;
    let (a, b) = (range.start, range.end);
    let mut ids: Vec<i32> = prompt.ids[range.clone()].iter().map(|&t| t as i32).collect();
    let mut blocks = vec![-1i32; b - a];
    // The chunk's pieces in order: (start, end, Some((item, first row))) for media rows, None
    // for text. A video's runs each take the next rows of its output.
    let mut pieces: Vec<Piece> = Vec::new();
    let mut cursor = a;
    for (index, item) in prompt.items.iter().enumerate() {
        let mut row = 0;
        for run in &item.runs {
            let (s, e) = (run.start.max(a), run.end.min(b));
            if s < e {
                ids[s - a..e - a].iter_mut().for_each(|id| *id = pad as i32);
                if item.kind == MediaKind::Image {
                    blocks[s - a..e - a].iter_mut().for_each(|x| *x = index as i32);
                }
                if cursor < s {
                    pieces.push((cursor, s, None));
                }
                pieces.push((s, e, Some((index, row + s - run.start))));
                cursor = e;
            }
            row += run.len();
        }
    }
    if cursor < b {
        pieces.push((cursor, b, None));
    }

    let ids = Array::from_slice(&ids, &[1, (b - a) as i32]);
    let text = model.model.embed(&ids)?;
    // Outputs of towers that also give rows for the first decoder layers: [1 + k, rows, hidden].
    let layers_added = pieces
        .iter()
        .filter_map(|&(_, _, item)| item.and_then(|(i, _)| outputs.output(i)))
        .filter(|o| o.ndim() == 3)
        .map(|o| o.dim(0) as usize - 1)
        .max()
        .unwrap_or(0);
    let mut rows = Vec::with_capacity(pieces.len());
    let mut added: Vec<Vec<Array>> = vec![Vec::with_capacity(pieces.len()); layers_added];
    for (s, e, item) in pieces {
        let local = (s - a) as i32..(e - a) as i32;
        match item {
            None => {
                let piece = text.index((.., local, ..));
                for layer in added.iter_mut() {
                    layer.push(ops::zeros_like(&piece)?);
                }
                rows.push(piece);
            }
            Some((index, first_row)) => {
                let output = outputs
                    .output(index)
                    .ok_or_else(|| EngineError::Internal(format!("no tower output for media item {} of the prompt", index + 1)))?;
                let within = first_row as i32..(first_row + e - s) as i32;
                let (main, extra) = match output.ndim() {
                    3 => (output.index((0, within.clone(), ..)), output.dim(0) - 1),
                    _ => (output.index((within.clone(), ..)), 0),
                };
                let piece = main.as_dtype(text.dtype())?.expand_dims(0)?;
                for (j, layer) in added.iter_mut().enumerate() {
                    layer.push(if (j as i32) < extra {
                        output.index((j as i32 + 1, within.clone(), ..)).as_dtype(text.dtype())?.expand_dims(0)?
                    } else {
                        ops::zeros_like(&piece)?
                    });
                }
                rows.push(piece);
            }
        }
    }
    let join = |mut parts: Vec<Array>| -> Result<Array> {
        Ok(if parts.len() == 1 { parts.pop().expect("one piece") } else { ops::concatenate(&parts, 1)? })
    };
    let embeds = join(rows)?;
    let layer_additions = if added.is_empty() {
        None
    } else {
        let layers = added.into_iter().map(join).collect::<Result<Vec<_>>>()?;
        Some(ops::stack(&layers, 0)?)
    };
    let positions = prompt.positions.as_ref().map(|p| p.slice(range.clone()));
    let media_blocks = blocks.iter().any(|&x| x >= 0).then_some(blocks.as_slice());
    let input = EmbeddingsInput {
        embeds: &embeds,
        ids: &ids,
        media_blocks,
        positions: positions.as_ref(),
        layer_additions: layer_additions.as_ref(),
    };
    model.model.forward(Input::Embeddings(input), Rows::One(state), Compute::Logits(Positions::Last))?.into_logits()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::single_range_in_vec_init)] // one image's range, not a range of values
    fn chunks_never_end_inside_an_image() {
        assert_eq!(chunk_ranges(0, 10, 4, &[]), [0..4, 4..8, 8..10]);
        assert_eq!(chunk_ranges(0, 10, 4, &[3..6]), [0..6, 6..10]);
        assert_eq!(chunk_ranges(2, 20, 4, &[5..15]), [2..15, 15..19, 19..20]);
        // An image ending exactly at a boundary, and two images in a row.
        assert_eq!(chunk_ranges(0, 12, 4, &[0..4, 4..9]), [0..4, 4..9, 9..12]);
        assert_eq!(chunk_ranges(0, 12, 3, &[2..5, 5..8]), [0..5, 5..8, 8..11, 11..12]);
        assert_eq!(chunk_ranges(5, 5, 4, &[]), Vec::<Range<usize>>::new());
    }
}
