//! Notations more than one surface reads or writes, each bounded so no input exhausts the
//! process: YAML read into JSON (`yamlread`, every YAML file repoctx reads), YAML written in
//! order from JSON (`yamlwrite`, with the staged writes of many files), the id of a
//! JSON-RPC line (`jsonrpc`, the server's wire), and go.mod and go.work (`gomod`, the manifest
//! reader's and the scopes' one parser of them).

pub mod gomod;
pub mod jsonrpc;
pub mod yamlread;
pub mod yamlwrite;
