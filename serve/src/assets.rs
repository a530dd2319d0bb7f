//! The page, built into the program: no build step, no CDN.

/// The HTML page.
pub const INDEX: &str = include_str!("../assets/index.html");
/// Its script: draws the board as SVG and talks to the API.
pub const APP: &str = include_str!("../assets/app.js");
/// Its style sheet.
pub const STYLE: &str = include_str!("../assets/style.css");
/// The icon.
pub const ICON: &str = include_str!("../assets/favicon.svg");
