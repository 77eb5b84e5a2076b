//! Enums of names: each variant a fixed name that JSON, the binding and TypeScript carry.

/// Declares an enum of names the binding mirrors for TypeScript as a string-literal union: the
/// enum, its `ALL` and its `as_str`, from one list.
macro_rules! named_enum {
    ($(#[$meta:meta])* $enum:ident { $($(#[$doc:meta])* $variant:ident = $name:literal,)* }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $enum {
            $($(#[$doc])* $variant,)*
        }

        impl $enum {
            /// Every one, in the order declared.
            pub const ALL: &'static [$enum] = &[$($enum::$variant),*];

            pub const fn as_str(self) -> &'static str {
                match self {
                    $($enum::$variant => $name,)*
                }
            }

            /// The one named `name`, if any.
            pub fn named(name: &str) -> Option<$enum> {
                Self::ALL.iter().copied().find(|e| e.as_str() == name)
            }
        }

        impl serde::Serialize for $enum {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.as_str())
            }
        }

        impl std::fmt::Display for $enum {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use named_enum;

/// Checks that `names` are distinct and each its variant's name split at its capitals by
/// `separator` (`_` snake case, `-` kebab case): napi names the binding's mirror of each so.
#[cfg(test)]
pub(crate) fn names_in_case<T: std::fmt::Debug>(
    all: &[T],
    name: impl Fn(&T) -> &'static str,
    separator: char,
) {
    let names: std::collections::HashSet<_> = all.iter().map(&name).collect();
    assert_eq!(names.len(), all.len());
    for one in all {
        let mut cased = String::new();
        for (i, c) in format!("{one:?}").chars().enumerate() {
            if c.is_ascii_uppercase() && i > 0 {
                cased.push(separator);
            }
            cased.push(c.to_ascii_lowercase());
        }
        assert_eq!(name(one), cased);
    }
}
