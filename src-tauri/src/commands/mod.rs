//! Commands the UI may call: a few lines each, parse -> engine -> map the error.

pub mod app;
pub mod capture;
pub mod chat;
pub mod files;
pub mod history;
pub mod local;
pub mod models;
pub mod review;
pub mod terminal;
pub mod tools;
pub mod voice;
pub mod window;
