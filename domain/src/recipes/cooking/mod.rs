//! What cooks expect of a recipe: scaled to the people at the table, in the units they measure with,
//! quantities written as cooks write them, and Cooklang, the open plain-text recipe format, out.
//!
//! Pure functions shared by the Worker (`/r/{slug}.json?servings=&units=`, `/r/{slug}.cook`, the
//! recipe page, MCP `get_recipe`) and the builder (the Cooklang dumps). The alternative we rejected
//! was scaling in the page's JavaScript: the API, the page and agents would each have their own
//! rounding; the page asks the Worker instead.

pub mod cooklang;
#[cfg(feature = "import")]
pub mod import;
pub mod quantity;
pub mod scale;
pub mod units;

pub use scale::{Adjusted, Request, adjust};
