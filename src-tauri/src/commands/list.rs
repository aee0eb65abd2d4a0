// The one list of the app's commands, as `module::function` under src/commands. Everything that
// needs the list takes it from here: the invoke handler (main.rs), the permissions and the main
// window's capability (build.rs, which `include!`s this file), and the TypeScript bindings
// (ipc.rs, whose test fails when ui/src/ipc.generated.ts is stale or a command is missing here).
//
// `app_commands!(m)` expands to `m! { module::function, ... }`.
macro_rules! app_commands {
    ($then:ident) => {
        $then! {
            runtime::runtime_info,
            runtime::diagnostics,
            conversations::list_conversations,
            conversations::rename_conversation,
            conversations::set_system_prompt,
            conversations::set_thinking,
            conversations::delete_conversation,
            conversations::conversation_messages,
            conversations::select_branch,
            conversations::search_messages,
            chat::send_message,
            chat::regenerate,
            chat::continue_reply,
            chat::edit_message,
            chat::stop_reply,
            chat::measure_context,
            attachments::attach_paths,
            attachments::attach_bytes,
            attachments::attachment_bytes,
            attachments::attachment_thumbnail,
            models::list_models,
            models::model_state,
            models::load_model,
            models::unload_model,
            desktop::open_link,
            desktop::show_in_folder,
            desktop::list_folder,
            settings::get_settings,
            settings::settings_choices,
            settings::save_settings,
            settings::server_status,
            providers::list_providers,
            providers::save_provider,
            providers::remove_provider,
            providers::refresh_provider_models,
            providers::mark_remote_model_inputs,
            providers::select_remote_model,
            hub::hub_settings,
            hub::save_hub_settings,
            hub::search_hub,
            hub::repo_details,
            hub::list_downloads,
            hub::start_download,
            hub::pause_download,
            hub::resume_download,
            hub::cancel_download,
        }
    };
}
