//! What every API's handlers share: reading a body (`body`), documents in a message
//! (`documents`), the error shape (`error`), a
//! request's media files (`media_files`), a request running on the engine (`running`),
//! structured output (`structured`), and one assistant turn whatever the API (`turn`).

pub mod body;
pub mod documents;
pub mod error;
pub mod media_files;
pub mod running;
pub mod structured;
pub mod turn;
