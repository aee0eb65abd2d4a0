#![doc = include_str!("../README.md")]

mod attachments;
mod conversations;
mod db;
mod document_index;
mod error;
mod ids;
mod messages;
mod replies;
mod reply_sources;
mod responses;
mod search;
mod settings;
mod status;
mod tool_calls;

pub use attachments::{Attachment, AttachmentHash, AttachmentMeta};
pub use conversations::{Conversation, ConversationCursor, ConversationPage, NewConversation, MAX_PAGE};
pub use db::Store;
pub use document_index::{IndexKey, Indexed, NewPassage, PassageHit, PassageQuery, RetrievalMode, MAX_PASSAGE_HITS, RRF_K};
pub use error::{Result, StoreError};
pub use ids::{ConversationId, MessageId};
pub use messages::{Message, ReplyStats, Siblings, SpeculativeReplyStats, StopReason};
pub use replies::{ReplyEnd, ReplyText};
pub use reply_sources::ReplySource;
pub use responses::{StoredResponse, MAX_CHAIN};
pub use search::{SearchHit, SnippetPart, MAX_HITS};
pub use status::{MessageStatus, Role};
pub use tool_calls::{NewToolCall, ToolCall, ToolCallStatus, ToolDecision, ToolOutcome, ToolResult};
