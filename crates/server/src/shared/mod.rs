//! What every API's handlers share: reading a body (`body`), inline data (`data_url`),
//! documents in a message
//! (`documents`), the error shape (`error`), function tools (`function_tools`), a request running on the engine (`running`),
//! structured output (`structured`), and one assistant turn whatever the API (`turn`).

pub mod body;
pub mod data_url;
pub mod documents;
pub mod error;
pub mod function_tools;
pub mod running;
pub mod structured;
pub mod turn;
