//! Fit or search: which of a message's documents go whole into the prompt and which are searched
//! for passages, and how many passages fit. The one place for the rule; the app asks it with
//! token counts it already has (the context meter's), so it needs no model.
//!
//! The rule: with `room` = the prompt budget less the chat's tokens,
//! - every document goes whole when all of them fit in `room`;
//! - otherwise documents go whole smallest first (ties in the order given) while they fit and
//!   leave room for [`MIN_PASSAGES`] passages of the rest; the rest are searched;
//! - the searched documents get as many passages as the room left holds, at most
//!   `max_passages`, each counted at [`passage_tokens`] (the chunk size with its overlap, a
//!   margin for the estimate and the passage's tags). Zero when none fits: the plan says so and
//!   the caller tells the person rather than sending the question without its documents.

use crate::chunk::ChunkSettings;

/// Passages searched documents get at least, when the chat leaves room for them: fewer rarely
/// hold an answer and its context.
pub const MIN_PASSAGES: usize = 3;

/// Passages searched documents get at most, by default.
pub const MAX_PASSAGES: usize = 8;

/// Tokens a passage's tags take in the prompt (`render_passages_for_prompt`), rounded up.
const PASSAGE_TAG_TOKENS: usize = 24;

/// How a document is used in a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DocumentUse {
    /// All of it, rendered by `render_for_prompt`.
    Whole,
    /// The passages a search of it (with the other searched ones) finds for the question.
    Searched,
}

/// What [`plan_documents`] decided.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct DocumentPlan {
    /// Per document, in the order given.
    pub uses: Vec<DocumentUse>,
    /// How many passages the searched documents get in all (0 when none is searched, or when
    /// the chat leaves no room for one).
    pub passages: usize,
    /// The tokens each passage was counted at.
    pub passage_tokens: usize,
    /// The tokens the plan fills: the whole documents and the passages.
    pub tokens: usize,
}

impl DocumentPlan {
    /// Whether some document is searched but not one passage fits (the chat is too long for
    /// its documents: start a new chat, or leave turns out).
    pub fn starved(&self) -> bool {
        self.passages == 0 && self.uses.contains(&DocumentUse::Searched)
    }
}

/// The tokens a passage is counted at in the prompt: the chunk target and overlap (estimates,
/// four characters a token, so a quarter more for text that tokenizes denser, such as code)
/// and its tags.
pub fn passage_tokens(settings: &ChunkSettings) -> usize {
    let estimated = settings.target_tokens.max(16) + settings.overlap_tokens.min(settings.target_tokens.max(16) / 2);
    estimated + estimated / 4 + PASSAGE_TAG_TOKENS
}

/// Decides, for a prompt of at most `prompt_budget` tokens (the context less the room kept for
/// the reply) holding `chat_tokens` of chat (system prompt, earlier turns and the question),
/// which documents (each `document_tokens[i]` tokens rendered whole) go whole and how many
/// passages the others get, at most `max_passages` ([`MAX_PASSAGES`] unless there is a reason).
pub fn plan_documents(
    prompt_budget: usize,
    chat_tokens: usize,
    document_tokens: &[usize],
    settings: &ChunkSettings,
    max_passages: usize,
) -> DocumentPlan {
    let room = prompt_budget.saturating_sub(chat_tokens);
    let per_passage = passage_tokens(settings);
    let total: usize = document_tokens.iter().sum();
    if total <= room {
        return DocumentPlan {
            uses: vec![DocumentUse::Whole; document_tokens.len()],
            passages: 0,
            passage_tokens: per_passage,
            tokens: total,
        };
    }
    let mut order: Vec<usize> = (0..document_tokens.len()).collect();
    order.sort_by_key(|&i| (document_tokens[i], i));
    let reserve = MIN_PASSAGES.min(max_passages) * per_passage;
    let mut uses = vec![DocumentUse::Searched; document_tokens.len()];
    let mut whole = 0;
    for (n, &i) in order.iter().enumerate() {
        // Every document is whole only if all fit, which they do not; so some stays searched.
        let last = n + 1 == order.len();
        if last || whole + document_tokens[i] + reserve > room {
            break;
        }
        whole += document_tokens[i];
        uses[i] = DocumentUse::Whole;
    }
    let passages = ((room - whole) / per_passage).min(max_passages);
    DocumentPlan { uses, passages, passage_tokens: per_passage, tokens: whole + passages * per_passage }
}

#[cfg(test)]
mod tests {
    use super::*;
    use DocumentUse::{Searched, Whole};

    const SETTINGS: ChunkSettings = ChunkSettings { target_tokens: 256, overlap_tokens: 32 };

    #[test]
    fn a_passage_counts_its_text_a_margin_and_its_tags() {
        assert_eq!(passage_tokens(&SETTINGS), 288 + 72 + 24);
    }

    #[test]
    fn documents_that_fit_go_whole() {
        let plan = plan_documents(8000, 1000, &[3000, 4000], &SETTINGS, MAX_PASSAGES);
        assert_eq!(plan.uses, [Whole, Whole]);
        assert_eq!((plan.passages, plan.tokens), (0, 7000));
        assert!(!plan.starved());
        assert_eq!(plan_documents(100, 100, &[], &SETTINGS, MAX_PASSAGES).uses, []);
    }

    #[test]
    fn a_large_one_is_searched_and_passages_fill_the_room() {
        // 6,000 of room: 10,000 cannot fit; 15 passages would, 8 are allowed.
        let plan = plan_documents(8000, 2000, &[10_000], &SETTINGS, MAX_PASSAGES);
        assert_eq!(plan.uses, [Searched]);
        assert_eq!(plan.passages, 8);
        assert_eq!(plan.tokens, 8 * 384);
        // A longer chat: 2,000 of room holds 5.
        assert_eq!(plan_documents(8000, 6000, &[10_000], &SETTINGS, MAX_PASSAGES).passages, 5);
    }

    #[test]
    fn several_the_small_ones_whole_while_room_is_left_for_passages_of_the_rest() {
        // Room 6,000. Smallest first: 500 (+1,152 reserve fits), 2,000 (2,500 + 1,152 fits),
        // 3,000 (5,500 + 1,152 does not): searched, with the 9,000.
        let plan = plan_documents(7000, 1000, &[9000, 2000, 3000, 500], &SETTINGS, MAX_PASSAGES);
        assert_eq!(plan.uses, [Searched, Whole, Searched, Whole]);
        assert_eq!(plan.passages, 8, "9 would fit; 8 are allowed");
        assert!(plan.tokens <= 6000);
        // Ties keep the order given.
        let plan = plan_documents(2000, 0, &[1000, 1000, 1000], &SETTINGS, MAX_PASSAGES);
        assert_eq!(plan.uses, [Searched, Searched, Searched], "whole would leave no room for 3 passages");
        let plan = plan_documents(2900, 0, &[1000, 1000, 1000], &SETTINGS, MAX_PASSAGES);
        assert_eq!(plan.uses, [Whole, Searched, Searched]);
    }

    #[test]
    fn a_chat_that_leaves_no_room_starves_the_search_and_says_so() {
        let plan = plan_documents(4000, 3900, &[5000], &SETTINGS, MAX_PASSAGES);
        assert_eq!((plan.uses.as_slice(), plan.passages), ([Searched].as_slice(), 0));
        assert!(plan.starved());
        let plan = plan_documents(4000, 9000, &[5000], &SETTINGS, MAX_PASSAGES);
        assert!(plan.starved(), "a chat past the budget is no panic");
        assert_eq!(plan_documents(8000, 0, &[10_000], &SETTINGS, 0).passages, 0);
    }
}
