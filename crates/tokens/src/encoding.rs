//! The OpenAI encodings this crate counts with.

use std::fmt;
use std::str::FromStr;

use crate::error::TokenError;

/// A byte-pair encoding whose vocabulary ships inside the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// `o200k_base`: GPT-4o, GPT-4.1, GPT-5 and the `o` series.
    O200kBase,
    /// `cl100k_base`: GPT-4, GPT-3.5-turbo and `text-embedding-ada-002`.
    Cl100kBase,
}

impl Encoding {
    /// Every supported encoding, in the order they are documented.
    pub const ALL: [Encoding; 2] = [Encoding::O200kBase, Encoding::Cl100kBase];

    /// The encoding's name as OpenAI and tiktoken spell it (`"o200k_base"`).
    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
        }
    }
}

impl FromStr for Encoding {
    type Err = TokenError;

    /// Parses an exact encoding name: `"o200k_base"` or `"cl100k_base"`.
    fn from_str(name: &str) -> Result<Self, Self::Err> {
        Encoding::ALL
            .into_iter()
            .find(|encoding| encoding.name() == name)
            .ok_or_else(|| TokenError::UnknownEncoding(name.to_owned()))
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for encoding in Encoding::ALL {
            assert_eq!(encoding.name().parse::<Encoding>(), Ok(encoding));
            assert_eq!(encoding.to_string(), encoding.name());
        }
    }

    #[test]
    fn unknown_names_are_rejected_with_the_expected_message() {
        for name in ["", "o200k", "O200K_BASE", "p50k_base", " cl100k_base"] {
            let err = name.parse::<Encoding>().expect_err(name);
            assert_eq!(err.to_string(), format!("unknown encoding '{name}': expected 'o200k_base' or 'cl100k_base'"));
        }
    }
}
