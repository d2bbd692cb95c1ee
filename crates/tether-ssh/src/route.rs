//! A host as the process that named it resolved it: where and as whom
//! ([`Target`]) and how ([`ConnectOptions`]), as data that crosses a
//! process boundary (serde). The daemon connects with a caller's route
//! instead of reading ssh_config and tether's config from its own `HOME`:
//! the person or agent who named the host decided how it is reached.
//! What belongs to one process (who asks for secrets, who hears the
//! steps) is not carried: the other side connects in batch mode.

use serde::{Deserialize, Serialize};

use crate::connect::{ConnectOptions, Target};

/// Where and how to reach one host, resolved.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Route {
    /// Where and as whom.
    pub target: Target,
    /// How (the jump hosts with their own options, the keys, the trust).
    pub options: ConnectOptions,
}

impl Route {
    /// A key that is equal for two routes exactly when their data are
    /// (their JSON): connections made with different settings are not
    /// shared. `None` for a route that cannot be written (a path that is
    /// not UTF-8).
    pub fn key(&self) -> Option<String> {
        serde_json::to_string(self).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_route_crosses_as_data_without_its_process_parts() {
        let options = ConnectOptions {
            steps: Some(crate::Steps(std::sync::Arc::new(|_| {}))),
            policy: crate::HostKeyPolicy::AcceptNew,
            keepalive: Some((std::time::Duration::from_secs(15), 3)),
            ..ConnectOptions::default()
        };
        let route = Route {
            target: Target {
                host: "n1".into(),
                hostname: "10.0.0.1".into(),
                port: 2222,
                user: "ops".into(),
            },
            options,
        };
        let text = serde_json::to_string(&route).unwrap_or_default();
        assert!(text.contains("\"accept-new\""), "{text}");
        let back: Route = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert_eq!(back.target, route.target);
        assert_eq!(back.options.policy, crate::HostKeyPolicy::AcceptNew);
        assert_eq!(back.options.keepalive, route.options.keepalive);
        assert!(back.options.steps.is_none() && back.options.secrets.is_none());
        assert_eq!(back.key(), route.key());
        let other = Route {
            target: Target {
                port: 22,
                ..route.target.clone()
            },
            ..route.clone()
        };
        assert_ne!(other.key(), route.key());
    }
}
