//! The one device classifier shared by the device matcher, cache keys and section contexts.

use regex::Regex;
use std::sync::LazyLock;

/// The class of device a request comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum Device {
    /// A phone.
    Mobile,
    /// A tablet (never folded into `Mobile`).
    Tablet,
    /// Everything else, including an empty user agent.
    Desktop,
}

// Constant patterns: `classifies_common_agents` proves they compile. Were one ever invalid, it
// would match nothing and the user agent would fall through to the next class.
// `android` without a later `mobile`: the regex crate has no look-ahead, so it is checked apart.
static TABLET: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"(?i)ipad|tablet").ok());
static MOBILE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"(?i)mobile|android|iphone|ipod|webos|blackberry|opera mini|iemobile").ok()
});

fn matches(pattern: &LazyLock<Option<Regex>>, text: &str) -> bool {
    pattern.as_ref().is_some_and(|r| r.is_match(text))
}

const MOBILE_UA: &str = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1";
const TABLET_UA: &str = "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/604.1";
const DESKTOP_UA: &str = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";

impl Device {
    /// Classifies a user agent: tablet first, then mobile, else desktop.
    pub fn from_user_agent(ua: &str) -> Device {
        let lower = ua.to_ascii_lowercase();
        let android_tablet = lower
            .find("android")
            .is_some_and(|i| !lower[i..].contains("mobile"));
        if android_tablet || matches(&TABLET, &lower) {
            Device::Tablet
        } else if matches(&MOBILE, &lower) {
            Device::Mobile
        } else {
            Device::Desktop
        }
    }

    /// The lowercase name (`mobile`, `tablet`, `desktop`).
    pub fn as_str(self) -> &'static str {
        match self {
            Device::Mobile => "mobile",
            Device::Tablet => "tablet",
            Device::Desktop => "desktop",
        }
    }

    /// A typical user agent of the class: what a preview with `deviceHint`, or `sitefile
    /// serve`'s page view asked to look as a device, resolves with.
    pub fn typical_user_agent(self) -> &'static str {
        match self {
            Device::Mobile => MOBILE_UA,
            Device::Tablet => TABLET_UA,
            Device::Desktop => DESKTOP_UA,
        }
    }

    /// The class a name of [`Device::as_str`] stands for, ignoring ASCII case (`deviceHint`).
    pub fn from_name(name: &str) -> Option<Device> {
        [Device::Mobile, Device::Tablet, Device::Desktop]
            .into_iter()
            .find(|d| d.as_str().eq_ignore_ascii_case(name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typical_agents_classify_as_their_class() {
        for device in [Device::Mobile, Device::Tablet, Device::Desktop] {
            assert_eq!(Device::from_user_agent(device.typical_user_agent()), device);
        }
    }

    #[test]
    fn classifies_common_agents() {
        let iphone = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) Mobile/15E148";
        let ipad = "Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) Mobile/15E148";
        let android_tab = "Mozilla/5.0 (Linux; Android 13; SM-X700) Chrome/120 Safari/537.36";
        let android_phone =
            "Mozilla/5.0 (Linux; Android 13; Pixel 7) Chrome/120 Mobile Safari/537.36";
        let silk = "Mozilla/5.0 (Linux; Android 9; KFTRWI) Silk/114 like Chrome Mobile Safari";
        let mac = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) Safari/605.1.15";
        assert_eq!(Device::from_user_agent(iphone), Device::Mobile);
        assert_eq!(Device::from_user_agent(ipad), Device::Tablet);
        assert_eq!(Device::from_user_agent(android_tab), Device::Tablet);
        assert_eq!(Device::from_user_agent(android_phone), Device::Mobile);
        assert_eq!(Device::from_user_agent(silk), Device::Mobile);
        assert_eq!(Device::from_user_agent(mac), Device::Desktop);
        assert_eq!(Device::from_user_agent(""), Device::Desktop);
    }
}
