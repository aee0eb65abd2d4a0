use std::time::Instant;

use confab_store::Role;

use crate::store;

#[tokio::test]
async fn the_first_page_of_ten_thousand_conversations_is_quick() {
    let (store, dir) = store().await;
    let n = 10_000;
    let start = Instant::now();
    // Filled directly in one transaction; going through the API would only test insert speed.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display())).await.unwrap();
    let mut tx = pool.begin().await.unwrap();
    for i in 0..n {
        sqlx::query("INSERT INTO conversations (title, created_at, updated_at) VALUES (?1, ?2, ?3)")
            .bind(format!("conversation {i}"))
            .bind(1_700_000_000_000i64 + i)
            // Not in id order, so the index, not the rowid, must give the order.
            .bind(1_700_000_000_000i64 + (i * 7919) % n)
            .execute(&mut *tx)
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
    pool.close().await;
    println!("inserted {n} conversations in {:?}", start.elapsed());
    let newest = store.list_conversations(1, None).await.unwrap().conversations[0].id;
    store.add_message(newest, None, Role::User, "warm up").await.unwrap();

    let start = Instant::now();
    let page = store.list_conversations(50, None).await.unwrap();
    let first = start.elapsed();
    let start = Instant::now();
    let mut cursor = page.next;
    let mut pages = 1;
    let mut total = page.conversations.len();
    let mut last = page.conversations.last().unwrap().updated_at;
    while let Some(after) = cursor {
        let next = store.list_conversations(200, Some(after)).await.unwrap();
        for c in &next.conversations {
            assert!(c.updated_at <= last, "out of order");
            last = c.updated_at;
        }
        total += next.conversations.len();
        cursor = next.next;
        pages += 1;
    }
    println!("first page of 50 of {n} conversations: {first:?}; all {pages} pages: {:?}", start.elapsed());
    assert_eq!(total, n as usize);
    assert_eq!(page.conversations.len(), 50);
    assert_eq!(page.conversations[0].id, newest);

    // The plan walks the index: no table scan, no sort.
    let pool = sqlx::SqlitePool::connect(&format!("sqlite://{}", store.path().display())).await.unwrap();
    let plan: Vec<(i64, i64, i64, String)> = sqlx::query_as(
        "EXPLAIN QUERY PLAN SELECT id FROM conversations
         WHERE (updated_at, id) < (?1, ?2) ORDER BY updated_at DESC, id DESC LIMIT 51",
    )
    .bind(i64::MAX)
    .bind(i64::MAX)
    .fetch_all(&pool)
    .await
    .unwrap();
    let plan: Vec<String> = plan.into_iter().map(|row| row.3).collect();
    println!("query plan: {plan:?}");
    assert!(plan.iter().any(|step| step.contains("conversations_by_update")), "{plan:?}");
    assert!(!plan.iter().any(|step| step.contains("TEMP B-TREE")), "{plan:?}");
    pool.close().await;
    drop(dir);
}
