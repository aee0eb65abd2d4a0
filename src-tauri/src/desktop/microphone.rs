//! The composer's microphone button (getUserMedia for audio) in the web view.
//!
//! WebKitGTK ships with media capture off and, with no handler for its `permission-request`
//! signal, denies every request. The page is the app's own UI under a strict content security
//! policy, so this turns capture on and allows requests for a microphone alone; a camera, the
//! screen or anything else is denied.
//!
//! On macOS, WKWebView asks wry's UI delegate, which grants capture when the app sets no
//! permission handler (wry 0.57 `request_media_capture_permission`); macOS itself then asks the
//! user once, with the bundle's NSMicrophoneUsageDescription (Info.plist).

/// `CONFAB_MOCK_CAPTURE=1`: WebKit's mock capture devices instead of real ones (a microphone
/// that plays a tone), for the end-to-end tests under Xvfb, which has no sound card.
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
const MOCK_CAPTURE_ENV: &str = "CONFAB_MOCK_CAPTURE";

/// Turns media capture on in the window's web view and answers its permission requests. Called
/// once the window exists, before the page can ask.
pub fn allow_microphone(window: &tauri::WebviewWindow) {
    #[cfg(target_os = "linux")]
    {
        let mock = std::env::var(MOCK_CAPTURE_ENV).is_ok_and(|v| v == "1");
        let set = window.with_webview(move |webview| {
            use webkit2gtk::{SettingsExt, WebViewExt};
            let view = webview.inner();
            if let Some(settings) = view.settings() {
                settings.set_enable_media_stream(true);
                if mock {
                    settings.set_enable_mock_capture_devices(true);
                }
            }
            view.connect_permission_request(|_, request| linux::answer(request));
        });
        match set {
            Ok(()) => tracing::debug!(mock, "the web view may record from the microphone"),
            Err(e) => tracing::warn!("could not turn on the web view's microphone: {e}"),
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = window;
}

#[cfg(target_os = "linux")]
mod linux {
    use webkit2gtk::glib::prelude::Cast;
    use webkit2gtk::{PermissionRequest, PermissionRequestExt, UserMediaPermissionRequest, UserMediaPermissionRequestExt};

    /// What a capture request asks for.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Capture {
        pub audio: bool,
        pub video: bool,
    }

    /// Only a microphone: no camera, and not the screen (which asks for neither device).
    pub fn allowed(capture: Capture) -> bool {
        capture.audio && !capture.video
    }

    /// Allows or denies the request; true: answered here (WebKit's default handler is not run).
    pub fn answer(request: &PermissionRequest) -> bool {
        let capture = request
            .downcast_ref::<UserMediaPermissionRequest>()
            .map(|media| Capture { audio: media.is_for_audio_device(), video: media.is_for_video_device() });
        match capture {
            Some(capture) if allowed(capture) => {
                tracing::info!("microphone access allowed");
                request.allow();
            }
            _ => {
                tracing::info!(?capture, "web view permission request denied (only the microphone is allowed)");
                request.deny();
            }
        }
        true
    }

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn only_a_microphone_alone_is_allowed() {
            assert!(allowed(Capture { audio: true, video: false }));
            assert!(!allowed(Capture { audio: true, video: true }), "not with the camera");
            assert!(!allowed(Capture { audio: false, video: true }), "not the camera");
            assert!(!allowed(Capture { audio: false, video: false }), "not the screen");
        }
    }
}
