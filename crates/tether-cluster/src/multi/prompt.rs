//! The multi-node prompt: where the next line goes, and how the nodes
//! are. A few nodes each get an indicator (`[● web01 ● web02 ○ web03]`);
//! past [`PromptStyle::fold_above`] the node set is folded and the states
//! counted (`[web[01-50] 48● 1○ 1✗]`), so the prompt stays one short line
//! at any size. Then the active nodes' common cwd, when they share one, and
//! how many of them failed the last command.

use crate::NodeSet;

/// A node's state, as the prompt shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NodeState {
    /// Selected, and its shell is there: the next line runs on it.
    Active,
    /// Not selected (its shell is there).
    Inactive,
    /// Its connection or shell is down (reconnecting, or never connected).
    Down,
    /// Its link was lost while its last command ran in tether on the
    /// node: the command runs on there; its end is collected when the
    /// link is back.
    Away,
}

impl NodeState {
    const ALL: [NodeState; 4] = [
        NodeState::Active,
        NodeState::Inactive,
        NodeState::Away,
        NodeState::Down,
    ];

    fn symbol(self, ascii: bool) -> &'static str {
        match (self, ascii) {
            (NodeState::Active, false) => "●",
            (NodeState::Inactive, false) => "○",
            (NodeState::Down, false) => "✗",
            (NodeState::Away, false) => "◌",
            (NodeState::Active, true) => "*",
            (NodeState::Inactive, true) => "-",
            (NodeState::Down, true) => "x",
            (NodeState::Away, true) => "~",
        }
    }

    fn color(self) -> &'static str {
        match self {
            NodeState::Active => "\x1b[32m",
            NodeState::Inactive => "\x1b[2m",
            NodeState::Down => "\x1b[31m",
            NodeState::Away => "\x1b[33m",
        }
    }
}

/// How the prompt looks (the config's settings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptStyle {
    /// Past this many nodes, states are counted instead of listed.
    pub fold_above: usize,
    /// Colours (off with `NO_COLOR`, or when the output is no terminal).
    pub color: bool,
    /// `*` `-` `~` `x` instead of `●` `○` `◌` `✗` (a terminal without
    /// UTF-8).
    pub ascii: bool,
    /// The config's prompt: `{nodes}`, `{cwd}`, `{failed}` and `{name}`
    /// replaced; `None`: `{nodes} {cwd} {failed}$ ` without the empty parts.
    pub format: Option<String>,
    /// The session's name, for `{name}`.
    pub name: String,
}

impl Default for PromptStyle {
    fn default() -> Self {
        PromptStyle {
            fold_above: 6,
            color: false,
            ascii: false,
            format: None,
            name: String::new(),
        }
    }
}

fn paint(style: &PromptStyle, color: &str, text: &str) -> String {
    if style.color {
        format!("{color}{text}\x1b[0m")
    } else {
        text.to_owned()
    }
}

/// The prompt for `nodes` (in node-set order, with their states), the
/// active nodes' common `cwd` (`None` when they differ or are unknown),
/// and how many active nodes `failed` the last command.
pub fn render(
    nodes: &[(&str, NodeState)],
    cwd: Option<&str>,
    failed: usize,
    style: &PromptStyle,
) -> String {
    let mut out = String::from("[");
    if nodes.len() <= style.fold_above {
        let each: Vec<String> = nodes
            .iter()
            .map(|(name, state)| {
                let symbol = paint(style, state.color(), state.symbol(style.ascii));
                format!("{symbol} {name}")
            })
            .collect();
        out.push_str(&each.join(" "));
    } else {
        let mut all = NodeSet::new();
        for (name, _) in nodes {
            all.insert(name);
        }
        out.push_str(&all.fold());
        for state in NodeState::ALL {
            let n = nodes.iter().filter(|(_, s)| *s == state).count();
            if n > 0 {
                let count = format!("{n}{}", state.symbol(style.ascii));
                out.push(' ');
                out.push_str(&paint(style, state.color(), &count));
            }
        }
    }
    out.push(']');
    let failed = (failed > 0).then(|| paint(style, "\x1b[31m", &format!("({failed} failed)")));
    if let Some(format) = &style.format {
        return format
            .replace("{nodes}", &out)
            .replace("{cwd}", cwd.unwrap_or(""))
            .replace("{failed}", failed.as_deref().unwrap_or(""))
            .replace("{name}", &style.name);
    }
    for part in [cwd.map(str::to_owned), failed].into_iter().flatten() {
        out.push(' ');
        out.push_str(&part);
    }
    out.push_str("$ ");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(n: usize) -> Vec<String> {
        (1..=n).map(|i| format!("web{i:03}")).collect()
    }

    #[test]
    fn one_node() {
        let style = PromptStyle::default();
        assert_eq!(
            render(&[("web01", NodeState::Active)], Some("/srv"), 0, &style),
            "[● web01] /srv$ "
        );
        assert_eq!(
            render(&[("web01", NodeState::Down)], None, 0, &style),
            "[✗ web01]$ "
        );
    }

    #[test]
    fn five_nodes_each_with_its_indicator() {
        let states = [
            NodeState::Active,
            NodeState::Active,
            NodeState::Inactive,
            NodeState::Down,
            NodeState::Away,
        ];
        let names = names(5);
        let nodes: Vec<(&str, NodeState)> = names.iter().map(String::as_str).zip(states).collect();
        let style = PromptStyle::default();
        assert_eq!(
            render(&nodes, Some("/tmp"), 1, &style),
            "[● web001 ● web002 ○ web003 ✗ web004 ◌ web005] /tmp (1 failed)$ "
        );
        let ascii = PromptStyle {
            ascii: true,
            ..style
        };
        assert_eq!(
            render(&nodes, None, 0, &ascii),
            "[* web001 * web002 - web003 x web004 ~ web005]$ "
        );
    }

    #[test]
    fn five_hundred_nodes_fold_into_counts() {
        let names = names(500);
        let nodes: Vec<(&str, NodeState)> = names
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let state = match i {
                    0..=479 => NodeState::Active,
                    480..=497 => NodeState::Inactive,
                    _ => NodeState::Down,
                };
                (n.as_str(), state)
            })
            .collect();
        let style = PromptStyle::default();
        assert_eq!(
            render(&nodes, Some("/srv"), 3, &style),
            "[web[001-500] 480● 18○ 2✗] /srv (3 failed)$ "
        );
        // The config's format.
        let custom = PromptStyle {
            format: Some("{name}:{nodes}{cwd}{failed}> ".into()),
            name: "ops".into(),
            ..style.clone()
        };
        assert_eq!(
            render(&nodes[..2], Some("/srv"), 0, &custom),
            "ops:[● web001 ● web002]/srv> "
        );
        // No zero counts; colours when asked.
        let active: Vec<(&str, NodeState)> =
            nodes.iter().map(|(n, _)| (*n, NodeState::Active)).collect();
        let colour = PromptStyle {
            color: true,
            ..style
        };
        assert_eq!(
            render(&active, None, 0, &colour),
            "[web[001-500] \x1b[32m500●\x1b[0m]$ "
        );
    }
}
