//! Helpers shared by the integration tests (`mod common;`).
#![allow(dead_code)]

pub mod conformance;
pub mod servers;
