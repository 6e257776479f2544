//! Country names editors write in `location.ts` rules, mapped to ISO 3166-1 alpha-2 codes.
//!
//! The geo headers carry codes (`BR`), editors often write names (`Brasil`). Names are matched
//! case-insensitively after trimming; anything not in the table is taken to be a code already.

use std::borrow::Cow;

/// `(lower-case name, ISO code)`.
const COUNTRY_NAMES: [(&str, &str); 72] = [
    ("brasil", "BR"),
    ("brazil", "BR"),
    ("estados unidos", "US"),
    ("estados unidos da américa", "US"),
    ("united states", "US"),
    ("united states of america", "US"),
    ("usa", "US"),
    ("eua", "US"),
    ("ee.uu.", "US"),
    ("argentina", "AR"),
    ("chile", "CL"),
    ("colombia", "CO"),
    ("colômbia", "CO"),
    ("mexico", "MX"),
    ("méxico", "MX"),
    ("méjico", "MX"),
    ("peru", "PE"),
    ("perú", "PE"),
    ("uruguay", "UY"),
    ("uruguai", "UY"),
    ("paraguay", "PY"),
    ("paraguai", "PY"),
    ("bolivia", "BO"),
    ("bolívia", "BO"),
    ("ecuador", "EC"),
    ("equador", "EC"),
    ("venezuela", "VE"),
    ("costa rica", "CR"),
    ("panama", "PA"),
    ("panamá", "PA"),
    ("guatemala", "GT"),
    ("república dominicana", "DO"),
    ("dominican republic", "DO"),
    ("portugal", "PT"),
    ("spain", "ES"),
    ("españa", "ES"),
    ("espanha", "ES"),
    ("france", "FR"),
    ("frança", "FR"),
    ("francia", "FR"),
    ("germany", "DE"),
    ("alemanha", "DE"),
    ("alemania", "DE"),
    ("deutschland", "DE"),
    ("italy", "IT"),
    ("itália", "IT"),
    ("italia", "IT"),
    ("united kingdom", "GB"),
    ("reino unido", "GB"),
    ("uk", "GB"),
    ("great britain", "GB"),
    ("england", "GB"),
    ("inglaterra", "GB"),
    ("netherlands", "NL"),
    ("holanda", "NL"),
    ("países baixos", "NL"),
    ("switzerland", "CH"),
    ("suíça", "CH"),
    ("suiza", "CH"),
    ("canada", "CA"),
    ("canadá", "CA"),
    ("japan", "JP"),
    ("japão", "JP"),
    ("japón", "JP"),
    ("china", "CN"),
    ("india", "IN"),
    ("índia", "IN"),
    ("australia", "AU"),
    ("austrália", "AU"),
    ("angola", "AO"),
    ("moçambique", "MZ"),
    ("mozambique", "MZ"),
];

/// The ISO code for a country name, or the input itself when it is not a known name.
pub(crate) fn country_code(name: &str) -> Cow<'_, str> {
    let trimmed = name.trim();
    let lower = trimmed.to_lowercase();
    COUNTRY_NAMES
        .iter()
        .find(|(n, _)| *n == lower)
        .map_or(Cow::Borrowed(trimmed), |(_, code)| Cow::Borrowed(*code))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn names_map_to_codes() {
        assert_eq!(country_code("Brasil"), "BR");
        assert_eq!(country_code("BRAZIL"), "BR");
        assert_eq!(country_code(" Estados Unidos "), "US");
        assert_eq!(country_code("USA"), "US");
        assert_eq!(country_code("MÉXICO"), "MX");
        assert_eq!(country_code("Reino Unido"), "GB");
        assert_eq!(country_code("BR"), "BR");
        assert_eq!(country_code("de"), "de");
        assert_eq!(country_code("Atlantis"), "Atlantis");
    }

    #[test]
    fn table_is_lower_case_unique_and_maps_to_codes() {
        let mut seen = HashSet::new();
        for (name, code) in COUNTRY_NAMES {
            assert_eq!(name, name.to_lowercase(), "{name}");
            assert_eq!(name, name.trim(), "{name}");
            assert!(seen.insert(name), "duplicate {name}");
            assert!(code.len() == 2 && code.bytes().all(|b| b.is_ascii_uppercase()));
            // `UK` is reserved for the United Kingdom, not assigned to another country.
            assert!(
                name.len() != 2 || name == "uk",
                "{name} would shadow an ISO code"
            );
        }
    }
}
