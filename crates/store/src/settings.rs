//! Settings: a key → JSON value table (sampling defaults, folders, theme, …).

use std::collections::BTreeMap;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::db::{now_ms, Store};
use crate::error::{Result, StoreError};

impl Store {
    /// The value stored under `key`, or `None`.
    pub async fn setting(&self, key: &str) -> Result<Option<Value>> {
        let text: Option<String> =
            sqlx::query_scalar("SELECT value FROM settings WHERE key = ?1").bind(key).fetch_optional(&self.reader).await?;
        text.map(|text| parse(key, &text)).transpose()
    }

    /// The value under `key` as a `T`, or `None`; a value of another shape is an error.
    pub async fn setting_as<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        self.setting(key)
            .await?
            .map(|value| serde_json::from_value(value).map_err(|source| StoreError::Setting { key: key.to_owned(), source }))
            .transpose()
    }

    /// Stores `value` under `key`, replacing what was there.
    pub async fn set_setting(&self, key: &str, value: &Value) -> Result<()> {
        if key.is_empty() {
            return Err(StoreError::InvalidInput("a setting needs a non-empty key".into()));
        }
        sqlx::query(
            "INSERT INTO settings (key, value, updated_at) VALUES (?1, ?2, ?3)
             ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
        )
        .bind(key)
        .bind(value.to_string())
        .bind(now_ms())
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Removes `key`; returns whether it was there.
    pub async fn delete_setting(&self, key: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM settings WHERE key = ?1").bind(key).execute(&self.writer).await?;
        Ok(done.rows_affected() > 0)
    }

    /// Every setting, by key.
    pub async fn settings(&self) -> Result<BTreeMap<String, Value>> {
        let rows: Vec<(String, String)> = sqlx::query_as("SELECT key, value FROM settings").fetch_all(&self.reader).await?;
        rows.into_iter()
            .map(|(key, text)| {
                let value = parse(&key, &text)?;
                Ok((key, value))
            })
            .collect()
    }
}

fn parse(key: &str, text: &str) -> Result<Value> {
    serde_json::from_str(text).map_err(|source| StoreError::Setting { key: key.to_owned(), source })
}
