//! `input!`, the one form an operation's input is declared in: the raw input both doors read, what
//! it checks into, and the checks, which make its [`super::Input`].
//!
//! ```text
//! input! {
//!     /// What the operation is (the schema's description).
//!     pub struct Raw {
//!         /// What the field is.
//!         name: Type { required, length(max = 100) },
//!     }
//!     /// What a checked input holds (or `=> Type` for a type declared elsewhere).
//!     => pub struct Checked { pub name: Type }
//!     |input, problems| { Some(Checked { name: required("name", input.name, problems)? }) }
//! }
//! ```
//!
//! The raw struct holds every field as an `Option` (so the readers name every missing one), and a
//! field's `{ … }` is its schema in schemars' words under the `schema` feature. The checks get the
//! raw input and the problems so far, and push every problem they find: the input is valid when
//! they answer `Some` and pushed nothing.
//!
//! The rejected alternative was a derive macro: a proc-macro crate for what a few lines of
//! `macro_rules!` say, and one more dependency to build before the Worker.

/// Declares an operation's input; see the module's doc.
macro_rules! input {
    (
        $(#[$meta:meta])*
        pub struct $name:ident { $($fields:tt)* }
        $(#[$valid_meta:meta])*
        => pub struct $valid:ident { $($valid_fields:tt)* }
        |$input:ident, $problems:ident| $check:block
    ) => {
        $crate::api::declare::input! {
            $(#[$meta])*
            pub struct $name { $($fields)* }
            => $valid
            |$input, $problems| $check
        }

        $(#[$valid_meta])*
        #[derive(Debug, Clone, PartialEq)]
        pub struct $valid { $($valid_fields)* }
    };
    (
        $(#[$meta:meta])*
        pub struct $name:ident {
            $($(#[$field_meta:meta])* $field:ident: $ty:ty $({ $($schema:tt)* })?,)*
        }
        => $valid:ty
        |$input:ident, $problems:ident| $check:block
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        #[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
        pub struct $name {
            $(
                $(#[$field_meta])*
                $(#[cfg_attr(feature = "schema", schemars($($schema)*))])?
                pub $field: Option<$ty>,
            )*
        }

        impl $crate::api::Input for $name {
            type Valid = $valid;

            fn validate(self) -> Result<$valid, Vec<$crate::Diagnostic>> {
                fn check($input: $name, $problems: &mut Vec<$crate::Diagnostic>) -> Option<$valid> $check
                let mut problems = Vec::new();
                match check(self, &mut problems) {
                    Some(valid) if problems.is_empty() => Ok(valid),
                    _ => Err(problems),
                }
            }
        }
    };
}

pub(super) use input;
