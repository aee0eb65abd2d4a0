//! The document passages a reply was given, numbered as its prompt numbered them: the reply's
//! citations ("Sources: [1] report.pdf p. 3").

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::attachments::AttachmentHash;
use crate::db::Store;
use crate::error::{Result, StoreError};
use crate::ids::MessageId;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, TS)]
pub struct ReplySource {
    /// 1, 2, ...: as the prompt and the reply cite it.
    pub number: u32,
    /// The document's attachment.
    pub attachment: AttachmentHash,
    /// The name it was attached under.
    pub document: String,
    /// 1-based, for a format with pages.
    pub page: Option<u32>,
    pub text: String,
}

impl Store {
    /// Keeps `sources` as the passages `reply` was given, in place of any kept before (a
    /// continued reply is given them again).
    pub async fn set_reply_sources(&self, reply: MessageId, sources: &[ReplySource]) -> Result<()> {
        if let Some(unnumbered) = sources.iter().find(|s| s.number == 0) {
            return Err(StoreError::InvalidInput(format!("source {:?} needs a number from 1", unnumbered.document)));
        }
        let mut tx = self.begin_write().await?;
        sqlx::query("DELETE FROM reply_sources WHERE message_id = ?1").bind(reply.0).execute(&mut *tx).await?;
        for source in sources {
            sqlx::query(
                "INSERT INTO reply_sources (message_id, number, attachment, document, page, text)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )
            .bind(reply.0)
            .bind(source.number)
            .bind(source.attachment.as_str())
            .bind(&source.document)
            .bind(source.page)
            .bind(&source.text)
            .execute(&mut *tx)
            .await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The passages `reply` was given, by number; none for a reply given whole documents or none.
    pub async fn reply_sources(&self, reply: MessageId) -> Result<Vec<ReplySource>> {
        let rows: Vec<(u32, String, String, Option<u32>, String)> =
            sqlx::query_as("SELECT number, attachment, document, page, text FROM reply_sources WHERE message_id = ?1 ORDER BY number")
                .bind(reply.0)
                .fetch_all(&self.reader)
                .await?;
        rows.into_iter()
            .map(|(number, attachment, document, page, text)| {
                Ok(ReplySource { number, attachment: AttachmentHash::parse(&attachment)?, document, page, text })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NewConversation, Role};

    #[tokio::test]
    async fn a_reply_s_sources_are_kept_in_order_replaced_and_go_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path().join("confab.db")).await.unwrap();
        let chat = store.create_conversation(NewConversation { title: "t".into(), ..Default::default() }).await.unwrap().id;
        let question = store.add_message(chat, None, Role::User, "What grew?").await.unwrap();
        let reply = store.start_reply(chat, question).await.unwrap();
        let hash = AttachmentHash::parse(&"ab".repeat(32)).unwrap();
        let source = |number, page: Option<u32>, text: &str| ReplySource {
            number,
            attachment: hash.clone(),
            document: "report.pdf".into(),
            page,
            text: text.into(),
        };
        assert!(store.reply_sources(reply).await.unwrap().is_empty());
        let given = vec![source(2, None, "Outlook"), source(1, Some(3), "Sales grew 12%.")];
        store.set_reply_sources(reply, &given).await.unwrap();
        assert_eq!(store.reply_sources(reply).await.unwrap(), vec![given[1].clone(), given[0].clone()]);

        // Reopened, as after a restart.
        drop(store);
        let store = Store::open(dir.path().join("confab.db")).await.unwrap();
        assert_eq!(store.reply_sources(reply).await.unwrap().len(), 2);
        store.set_reply_sources(reply, &[source(1, Some(4), "Costs fell.")]).await.unwrap();
        assert_eq!(store.reply_sources(reply).await.unwrap(), vec![source(1, Some(4), "Costs fell.")]);
        let refused = store.set_reply_sources(reply, &[source(0, None, "x")]).await.unwrap_err();
        assert!(matches!(refused, StoreError::InvalidInput(_)), "{refused}");

        store.delete_conversation(chat).await.unwrap();
        assert!(store.reply_sources(reply).await.unwrap().is_empty(), "they go with the reply");
    }
}
