//! Remote providers in Settings and remote models in the model menu. The page gets each
//! provider without its key: only whether one is set.

use super::App;
use crate::failure::Failure;
use crate::providers::{error_message, ProviderInput, ProvidersView, RemoteChoice};

#[tauri::command]
pub async fn list_providers(state: App<'_>) -> Result<ProvidersView, Failure> {
    Ok(state.providers.lock().await.view(&state.secrets))
}

/// Adds (no id) or edits a provider. Its key, when given, goes to the secret store.
#[tauri::command]
pub async fn save_provider(state: App<'_>, provider: ProviderInput) -> Result<ProvidersView, Failure> {
    let mut providers = state.providers.lock().await;
    providers.put(provider, &state.store, &state.secrets).await?;
    Ok(providers.view(&state.secrets))
}

#[tauri::command]
pub async fn remove_provider(state: App<'_>, id: u32) -> Result<ProvidersView, Failure> {
    let mut providers = state.providers.lock().await;
    providers.remove(id, &state.store, &state.secrets).await?;
    Ok(providers.view(&state.secrets))
}

/// Asks the provider for its models (`GET /v1/models`).
#[tauri::command]
pub async fn refresh_provider_models(state: App<'_>, id: u32) -> Result<ProvidersView, Failure> {
    // Not holding the list while the network answers: replies and the picker go on meanwhile.
    let (_, client) = state.providers.lock().await.client(id, &state.secrets)?;
    let listed = client.models().await.map_err(|e| Failure(error_message(&e)))?;
    let mut providers = state.providers.lock().await;
    providers.set_models(id, listed, &state.store).await?;
    Ok(providers.view(&state.secrets))
}

/// The user's marks for a model whose endpoint does not say what it takes.
#[tauri::command]
pub async fn mark_remote_model_inputs(
    state: App<'_>,
    provider: u32,
    model: String,
    vision: bool,
    audio: bool,
) -> Result<ProvidersView, Failure> {
    let mut providers = state.providers.lock().await;
    providers.mark_inputs(provider, &model, vision, audio, &state.store).await?;
    Ok(providers.view(&state.secrets))
}

/// Sends replies to a provider's model from now on; `None`: back to the local model.
#[tauri::command]
pub async fn select_remote_model(state: App<'_>, choice: Option<RemoteChoice>) -> Result<ProvidersView, Failure> {
    let mut providers = state.providers.lock().await;
    providers.select(choice, &state.store).await?;
    Ok(providers.view(&state.secrets))
}
