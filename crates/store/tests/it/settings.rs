use confab_store::StoreError;
use serde_json::json;

use crate::store;

#[tokio::test]
async fn settings_get_set_all_delete() {
    let (store, _dir) = store().await;
    assert_eq!(store.setting("theme").await.unwrap(), None);
    store.set_setting("theme", &json!("dark")).await.unwrap();
    store.set_setting("sampling", &json!({"temperature": 0.7, "top_p": 0.9})).await.unwrap();
    store.set_setting("theme", &json!("light")).await.unwrap();
    assert_eq!(store.setting("theme").await.unwrap(), Some(json!("light")));

    let all = store.settings().await.unwrap();
    assert_eq!(all.len(), 2);
    assert_eq!(all["sampling"]["top_p"], json!(0.9));

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Sampling {
        temperature: f64,
        top_p: f64,
    }
    let sampling: Option<Sampling> = store.setting_as("sampling").await.unwrap();
    assert_eq!(sampling, Some(Sampling { temperature: 0.7, top_p: 0.9 }));
    let wrong = store.setting_as::<Vec<String>>("sampling").await.unwrap_err();
    assert!(matches!(wrong, StoreError::Setting { .. }), "{wrong:?}");
    assert!(wrong.to_string().contains("\"sampling\""), "{wrong}");

    assert!(store.delete_setting("theme").await.unwrap());
    assert!(!store.delete_setting("theme").await.unwrap());
    assert_eq!(store.setting("theme").await.unwrap(), None);
    assert!(matches!(store.set_setting("", &json!(1)).await, Err(StoreError::InvalidInput(_))));
    // Values of every JSON kind round-trip.
    for value in [json!(null), json!(true), json!(-3), json!([1, "two", {"3": null}]), json!("\"quoted\"")] {
        store.set_setting("v", &value).await.unwrap();
        assert_eq!(store.setting("v").await.unwrap(), Some(value));
    }
}
