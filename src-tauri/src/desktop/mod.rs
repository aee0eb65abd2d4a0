//! The app on the desktop: the web view's microphone (`microphone`) and CPU priority
//! (`web_view_priority`), links and folders handed to the system (`opener`), and the folder
//! picker's view of the disk (`folders`).

pub mod folders;
pub mod microphone;
pub mod opener;
pub mod web_view_priority;
