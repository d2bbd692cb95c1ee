//! Keys as real terminals send them once a program turned on an
//! enhanced keyboard: kitty with Kitty keyboard flags (1 disambiguate, 2
//! event types, 4 alternate keys, 8 every key as an escape code, 16
//! associated text) and xterm with modifyOtherKeys 1 or 2, on a US layout.
//! Each typed character is a list of events; [`Typed::bytes`] is what the
//! terminal writes.

/// What a terminal sends for some typed text, key event by key event.
pub struct Typed {
    /// Each event's bytes, in order.
    pub events: Vec<Vec<u8>>,
    /// The index of the first event of each typed character.
    pub starts: Vec<usize>,
}

impl Typed {
    /// Every byte, in order.
    pub fn bytes(&self) -> Vec<u8> {
        self.events.concat()
    }

    /// The bytes before the `n`th typed character.
    pub fn before(&self, n: usize) -> Vec<u8> {
        self.events[..self.starts[n]].concat()
    }
}

/// How a terminal encodes keys.
#[derive(Clone, Copy, Debug)]
pub enum Keyboard {
    /// kitty with these Kitty keyboard flags.
    Kitty(u32),
    /// xterm with this modifyOtherKeys level.
    Xterm(u32),
}

const SHIFTED: &str = "~!@#$%^&*()_+{}|:\"<>?";
const PLAIN: &str = "`1234567890-=[]\\;',./";

impl Keyboard {
    /// The events for `text` (`\r` is Return).
    pub fn typed(self, text: &str) -> Typed {
        let mut t = Typed {
            events: Vec::new(),
            starts: Vec::new(),
        };
        for c in text.chars() {
            t.starts.push(t.events.len());
            match self {
                Keyboard::Kitty(flags) => kitty(&mut t.events, c, flags),
                Keyboard::Xterm(level) => xterm(&mut t.events, c, level),
            }
        }
        t
    }

    /// The bytes that turn this encoding on in the terminal (what a
    /// remote program prints).
    pub fn turn_on(self) -> String {
        match self {
            Keyboard::Kitty(flags) => format!(r"\033[>{flags}u"),
            Keyboard::Xterm(level) => format!(r"\033[>4;{level}m"),
        }
    }
}

fn kitty(out: &mut Vec<Vec<u8>>, c: char, flags: u32) {
    let (events, alternates, all_keys, text) = (
        flags & 2 != 0,
        flags & 4 != 0,
        flags & 8 != 0,
        flags & 16 != 0,
    );
    let mut push = |s: String| out.push(s.into_bytes());
    if c == '\r' {
        if all_keys {
            push("\x1b[13u".into());
            if events {
                push("\x1b[13;1:3u".into());
            }
        } else {
            push("\r".into());
        }
        return;
    }
    if !all_keys {
        // Text keys (Shift alone at most) stay text below flag 8.
        push(c.to_string());
        return;
    }
    let (base, shift) = match SHIFTED.find(c) {
        Some(i) => (u32::from(PLAIN.as_bytes()[i]), true),
        None if c.is_ascii_uppercase() => (u32::from(c.to_ascii_lowercase()), true),
        None => (c as u32, false),
    };
    let key = if shift && alternates {
        format!("{base}:{}", c as u32)
    } else {
        base.to_string()
    };
    let mods = if shift { 2 } else { 1 };
    if shift {
        push("\x1b[57441;2u".into());
    }
    match (shift, text) {
        (_, true) => push(format!("\x1b[{key};{mods};{}u", c as u32)),
        (true, false) => push(format!("\x1b[{key};{mods}u")),
        (false, false) => push(format!("\x1b[{key}u")),
    }
    if events {
        push(format!("\x1b[{key};{mods}:3u"));
        if shift {
            push("\x1b[57441;1:3u".into());
        }
    }
}

fn xterm(out: &mut Vec<Vec<u8>>, c: char, level: u32) {
    // Level 1 leaves the keys whose meaning is well known alone; level 2
    // sends Shift with a printable key as `CSI 27 ; 2 ; code ~`.
    let shifted = SHIFTED.contains(c) || c.is_ascii_uppercase();
    if level >= 2 && shifted {
        out.push(format!("\x1b[27;2;{}~", c as u32).into_bytes());
    } else {
        out.push(c.to_string().into_bytes());
    }
}
