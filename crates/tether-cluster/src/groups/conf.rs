//! Reading ClusterShell's group configuration as ClusterShell 1.9 reads
//! it: every `groups.conf` that exists among `/etc/clustershell`,
//! `~/.local/etc/clustershell`, `$XDG_CONFIG_HOME/clustershell` (else
//! `~/.config/clustershell`) and `$CLUSTERSHELL_CFGDIR`, read in that
//! order into one configuration (a later file's keys over an earlier's);
//! `$CFGDIR` is the directory of the last one read. `[Main]` gives the
//! default source (`default`), the directories of more sections
//! (`confdir`, or its older name `groupsdir`: each `*.conf` there, with
//! that directory as its sources' `$CFGDIR`) and of YAML group files
//! (`autodir`: each `*.yaml`, `yaml.rs`). Every other section defines
//! upcall sources, one per comma-separated name in its header. The
//! default source is `[Main] default`, else the first source defined.
//!
//! A key tether does not apply is an error (ClusterShell ignores it), as
//! is a source defined twice. It runs no upcall (`upcall.rs` does).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use configparser::ini::{Ini, IniDefault};

use super::yaml;
use crate::error::ClusterError;

/// The keys of a source's section.
const SOURCE_KEYS: [&str; 5] = ["map", "all", "list", "reverse", "cache_time"];

/// The keys of `[Main]`.
const MAIN_KEYS: [&str; 4] = ["default", "confdir", "groupsdir", "autodir"];

/// ClusterShell's `cache_time` when a section sets none.
const DEFAULT_CACHE_TIME: Duration = Duration::from_secs(3600);

/// A source's upcalls, as its section gives them.
#[derive(Clone, Debug, PartialEq)]
pub struct Upcalls {
    /// `map` (the only one required).
    pub map: String,
    /// `all`.
    pub all: Option<String>,
    /// `list`.
    pub list: Option<String>,
    /// `reverse`.
    pub reverse: Option<String>,
    /// How long a result is kept (`cache_time`, default an hour).
    pub cache_time: Duration,
    /// `$CFGDIR`, and where the upcalls run.
    pub cfgdir: PathBuf,
}

/// Where a source's groups come from.
#[derive(Clone, Debug, PartialEq)]
pub enum SourceKind {
    /// Commands, from a section of `groups.conf` or `groups.conf.d`.
    Upcalls(Upcalls),
    /// A mapping in a YAML file of `autodir`: each group's node set.
    Static(Vec<(String, String)>),
}

/// One group source.
#[derive(Clone, Debug, PartialEq)]
pub struct Source {
    /// Its name.
    pub name: String,
    /// The file that defines it.
    pub file: PathBuf,
    /// Its groups.
    pub kind: SourceKind,
}

/// The sources ClusterShell's configuration defines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Loaded {
    /// In the order they were defined.
    pub sources: Vec<Source>,
    /// The default source's name.
    pub default: Option<String>,
    /// The `groups.conf` files read.
    pub files: Vec<PathBuf>,
}

/// The `groups.conf` files ClusterShell would read, in its order.
pub fn candidates() -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut dirs = vec![PathBuf::from("/etc/clustershell")];
    if let Some(h) = &home {
        dirs.push(h.join(".local/etc/clustershell"));
    }
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(x) => dirs.push(PathBuf::from(x).join("clustershell")),
        None => dirs.extend(home.map(|h| h.join(".config/clustershell"))),
    }
    if let Some(d) = std::env::var_os("CLUSTERSHELL_CFGDIR") {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter().map(|d| d.join("groups.conf")).collect()
}

/// A reader of Python's `ConfigParser` format as ClusterShell uses it:
/// `key: value` or `key = value`, `#` and `;` comments on their own
/// lines only, indented lines continuing a value, sections' names kept
/// as written (keys are lowercased by [`section`]).
fn ini() -> Ini {
    let mut d = IniDefault::default();
    d.default_section = "DEFAULT".into();
    d.comment_symbols = vec!['#', ';'];
    d.inline_comment_symbols = None;
    d.delimiters = vec!['=', ':'];
    d.case_sensitive = true;
    d.multiline = true;
    d.enable_inline_comments = false;
    Ini::new_from_defaults(d)
}

type Sections = indexmap::IndexMap<String, indexmap::IndexMap<String, Option<String>>>;

fn problem(file: &Path, problem: String) -> ClusterError {
    ClusterError::GroupsConf {
        file: file.to_owned(),
        problem,
    }
}

/// Reads `files` (those that exist) and the directories they name.
pub fn load(files: &[PathBuf]) -> Result<Loaded, ClusterError> {
    let mut cfg = ini();
    let mut read = Vec::new();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(text) => {
                cfg.read_and_append(text).map_err(|e| problem(f, e))?;
                read.push(f.clone());
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(problem(f, e.to_string())),
        }
    }
    let Some(last) = read.last() else {
        return Ok(Loaded::default());
    };
    let cfgdir = last.parent().unwrap_or(Path::new("/")).to_owned();
    let map: Sections = cfg.get_map_ref().clone();
    let mut loaded = Loaded {
        files: read.clone(),
        ..Loaded::default()
    };
    let main = section(&map, "Main", last, &MAIN_KEYS)?;
    let dir_list = |key: &str| -> Result<Vec<PathBuf>, ClusterError> {
        let Some(text) = main.iter().find(|(k, _)| k == key).map(|(_, v)| v) else {
            return Ok(Vec::new());
        };
        let words = shlex::split(text)
            .ok_or_else(|| problem(last, format!("[Main] {key}: unbalanced quotes")))?;
        let cfg = cfgdir.to_string_lossy();
        let mut dirs: Vec<PathBuf> = Vec::new();
        for w in words {
            let d = normal(Path::new(&super::upcall::substitute(
                &w,
                &[("CFGDIR", &cfg)],
            )));
            if !dirs.contains(&d) {
                dirs.push(d);
            }
        }
        Ok(dirs)
    };
    let has_groupsdir = main.iter().any(|(k, _)| k == "groupsdir");
    for dir in dir_list(if has_groupsdir {
        "groupsdir"
    } else {
        "confdir"
    })? {
        for file in files_in(&dir, "conf", last)? {
            let mut part = ini();
            // ClusterShell skips a part it cannot read.
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            part.read(text).map_err(|e| problem(&file, e))?;
            let sections: Sections = part.get_map_ref().clone();
            sources_from(&sections, &file, &dir, &mut loaded.sources)?;
        }
    }
    for dir in dir_list("autodir")? {
        for file in files_in(&dir, "yaml", last)? {
            match std::fs::read_to_string(&file) {
                Ok(text) => {
                    for (name, groups) in yaml::sources(&file, &text)? {
                        add(
                            &mut loaded.sources,
                            Source {
                                name,
                                file: file.clone(),
                                kind: SourceKind::Static(groups),
                            },
                        )?;
                    }
                }
                // As ClusterShell: a file not ours to read is skipped.
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {}
                Err(e) => return Err(problem(&file, e.to_string())),
            }
        }
    }
    sources_from(&map, last, &cfgdir, &mut loaded.sources)?;
    let default = main
        .iter()
        .find(|(k, _)| k == "default")
        .map(|(_, v)| v.trim().to_owned())
        .filter(|v| !v.is_empty());
    loaded.default = match default {
        Some(d) if loaded.sources.iter().any(|s| s.name == d) => Some(d),
        Some(d) => {
            return Err(problem(
                last,
                format!(
                    "[Main] default: {d:?} is not a group source (they are: {})",
                    names(&loaded)
                ),
            ));
        }
        None => loaded.sources.first().map(|s| s.name.clone()),
    };
    Ok(loaded)
}

/// The sources' names, comma-separated, or "none".
pub fn names(loaded: &Loaded) -> String {
    let all: Vec<&str> = loaded.sources.iter().map(|s| s.name.as_str()).collect();
    if all.is_empty() {
        "none".into()
    } else {
        all.join(", ")
    }
}

/// The `*.EXT` files of `dir`, sorted; none when it does not exist.
fn files_in(dir: &Path, ext: &str, named_in: &Path) -> Result<Vec<PathBuf>, ClusterError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(problem(
                named_in,
                format!("the directory {} it names: {e}", dir.display()),
            ));
        }
    };
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    Ok(files)
}

/// `path` with `.` and repeated separators gone, and `..` taken back
/// where it can be, as Python's `os.path.normpath`.
fn normal(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir
                if matches!(out.components().next_back(), Some(Component::Normal(_))) =>
            {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The keys of `name` (with those of `[DEFAULT]` it takes under them),
/// lowercased; a key not in `known` (for `[DEFAULT]`, not one any section
/// takes) is an error.
fn section(
    map: &Sections,
    name: &str,
    file: &Path,
    known: &[&str],
) -> Result<Vec<(String, String)>, ClusterError> {
    let mut keys: Vec<(String, String)> = Vec::new();
    let tables = [("DEFAULT", map.get("DEFAULT")), (name, map.get(name))];
    for (table_name, table) in tables.into_iter().filter_map(|(n, t)| Some((n, t?))) {
        for (k, v) in table {
            let k = k.to_lowercase();
            let any = SOURCE_KEYS.iter().chain(&MAIN_KEYS).any(|x| *x == k);
            if table_name == "DEFAULT" && any && !known.contains(&k.as_str()) {
                // Another kind of section's key, for those.
                continue;
            }
            if !known.contains(&k.as_str()) {
                let name = table_name;
                return Err(problem(
                    file,
                    format!(
                        "[{name}] {k}: not a key tether applies (it knows {})",
                        known.join(", ")
                    ),
                ));
            }
            let v = v
                .clone()
                .ok_or_else(|| problem(file, format!("[{name}] {k}: no value")))?;
            keys.retain(|(old, _)| *old != k);
            keys.push((k, v));
        }
    }
    Ok(keys)
}

/// The upcall sources of `map`'s sections (all but `Main` and
/// `DEFAULT`), run in `cfgdir`.
fn sources_from(
    map: &Sections,
    file: &Path,
    cfgdir: &Path,
    sources: &mut Vec<Source>,
) -> Result<(), ClusterError> {
    for header in map.keys().filter(|h| *h != "DEFAULT") {
        let names: Vec<&str> = header.split(',').filter(|n| *n != "Main").collect();
        if names.is_empty() {
            continue;
        }
        let keys = section(map, header, file, &SOURCE_KEYS)?;
        let get = |k: &str| {
            keys.iter()
                .find(|(key, _)| key == k)
                .map(|(_, v)| v.clone())
        };
        let map_upcall = get("map").ok_or_else(|| {
            problem(
                file,
                format!("[{header}] has no map upcall (the one every source needs)"),
            )
        })?;
        let cache_time = match get("cache_time") {
            None => DEFAULT_CACHE_TIME,
            Some(t) => t
                .trim()
                .parse::<f64>()
                .ok()
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
                .ok_or_else(|| {
                    problem(
                        file,
                        format!("[{header}] cache_time: {t:?} is not a number of seconds"),
                    )
                })?,
        };
        for name in names {
            let upcalls = Upcalls {
                map: map_upcall.clone(),
                all: get("all"),
                list: get("list"),
                reverse: get("reverse"),
                cache_time,
                cfgdir: cfgdir.to_owned(),
            };
            add(
                sources,
                Source {
                    name: name.to_owned(),
                    file: file.to_owned(),
                    kind: SourceKind::Upcalls(upcalls),
                },
            )?;
        }
    }
    Ok(())
}

/// Adds `source`; a name taken already is an error (as in ClusterShell).
fn add(sources: &mut Vec<Source>, source: Source) -> Result<(), ClusterError> {
    if let Some(old) = sources.iter().find(|s| s.name == source.name) {
        return Err(problem(
            &source.file,
            format!(
                "group source {:?} is defined twice (also in {}): rename one",
                source.name,
                old.file.display()
            ),
        ));
    }
    sources.push(source);
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn dir(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tether-gc-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("groups.conf.d")).unwrap();
        std::fs::create_dir_all(d.join("groups.d")).unwrap();
        d
    }

    #[test]
    fn sections_parts_yaml_default_and_cfgdir() {
        let d = dir("all");
        std::fs::write(
            d.join("groups.conf"),
            "[Main]\ndefault: b\nconfdir: $CFGDIR/groups.conf.d /no/such\nautodir: '$CFGDIR/groups.d'\n\n[DEFAULT]\nlist: echo dflt\n# a comment\n[a,b]\nmap: echo $GROUP\n  more # kept\nCache_Time = 1.5\n; another\n[c]\nmap = x: y\nlist: l\n",
        )
        .unwrap();
        std::fs::write(
            d.join("groups.conf.d/p.conf"),
            "[part]\nmap: m\nreverse: r\n",
        )
        .unwrap();
        std::fs::write(d.join("groups.d/y.yaml"), "roles:\n  adm: e0\n").unwrap();
        let l = load(&[PathBuf::from("/no/such/groups.conf"), d.join("groups.conf")]).unwrap();
        let names: Vec<&str> = l.sources.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["part", "roles", "a", "b", "c"]);
        assert_eq!(l.default.as_deref(), Some("b"));
        let SourceKind::Upcalls(a) = &l.sources[2].kind else {
            panic!("a is not an upcall source")
        };
        assert_eq!(a.map, "echo $GROUP\nmore # kept");
        assert_eq!(a.cache_time, Duration::from_millis(1500));
        assert_eq!(a.cfgdir, d);
        let SourceKind::Upcalls(c) = &l.sources[4].kind else {
            panic!("c is not an upcall source")
        };
        assert_eq!((c.map.as_str(), c.list.as_deref()), ("x: y", Some("l")));
        assert_eq!(a.list.as_deref(), Some("echo dflt"));
        let SourceKind::Upcalls(p) = &l.sources[0].kind else {
            panic!("part is not an upcall source")
        };
        assert_eq!(p.cfgdir, d.join("groups.conf.d"));
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn what_tether_cannot_apply_is_an_error() {
        let d = dir("bad");
        let f = d.join("groups.conf");
        for (text, says) in [
            ("[s]\nmap: a\nmapp: b\n", "mapp"),
            ("[s]\nlist: a\n", "no map upcall"),
            ("[s]\nmap: a\ncache_time: soon\n", "cache_time"),
            (
                "[Main]\ndefault: nope\n[s]\nmap: a\n",
                "\"nope\" is not a group source",
            ),
            ("[s]\nmap: a\n[t,s]\nmap: b\n", "defined twice"),
            ("[DEFAULT]\nmaps: a\n[s]\nmap: b\n", "[DEFAULT] maps"),
        ] {
            std::fs::write(&f, text).unwrap();
            let e = load(std::slice::from_ref(&f)).unwrap_err().to_string();
            assert!(
                e.contains(says) && e.contains("groups.conf"),
                "{text:?}: {e}"
            );
        }
        assert_eq!(load(&[d.join("none.conf")]).unwrap(), Loaded::default());
        let _ = std::fs::remove_dir_all(&d);
    }
}
