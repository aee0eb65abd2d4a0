use confab_store::{StoreError, StoredResponse};
use serde_json::json;

use crate::store;

fn response(id: &str, previous: Option<&str>) -> StoredResponse {
    StoredResponse {
        id: id.into(),
        previous_id: previous.map(Into::into),
        created_at: 0,
        input: json!([{ "type": "message", "role": "user", "content": id }]),
        response: json!({ "id": id, "output": [] }),
    }
}

#[tokio::test]
async fn a_response_is_kept_read_and_deleted() {
    let (store, _dir) = store().await;
    store.save_response(&response("resp_1", None)).await.unwrap();
    let kept = store.response("resp_1").await.unwrap();
    assert_eq!((kept.id.as_str(), kept.previous_id, kept.input[0]["content"].as_str()), ("resp_1", None, Some("resp_1")));
    assert!(kept.created_at > 0);
    assert!(store.delete_response("resp_1").await.unwrap());
    assert!(!store.delete_response("resp_1").await.unwrap(), "already gone");
    assert!(matches!(store.response("resp_1").await, Err(StoreError::NotFound { what: "response", .. })));
}

#[tokio::test]
async fn a_chain_is_read_oldest_first_and_shows_a_deleted_link() {
    let (store, _dir) = store().await;
    store.save_response(&response("resp_a", None)).await.unwrap();
    store.save_response(&response("resp_b", Some("resp_a"))).await.unwrap();
    store.save_response(&response("resp_c", Some("resp_b"))).await.unwrap();
    let ids = |chain: Vec<StoredResponse>| chain.into_iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(store.response_chain("resp_c").await.unwrap()), ["resp_a", "resp_b", "resp_c"]);
    assert_eq!(ids(store.response_chain("resp_a").await.unwrap()), ["resp_a"]);

    store.delete_response("resp_a").await.unwrap();
    let broken = store.response_chain("resp_c").await.unwrap();
    assert_eq!(broken[0].id, "resp_b");
    assert_eq!(broken[0].previous_id.as_deref(), Some("resp_a"), "the oldest link names the one deleted");
    assert!(matches!(store.response_chain("resp_x").await, Err(StoreError::NotFound { .. })));
}
