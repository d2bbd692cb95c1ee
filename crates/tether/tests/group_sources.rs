//! Group sources as ClusterShell defines them, through `tether hosts` and
//! `tether exec`: a `groups.conf` in a scratch `$CLUSTERSHELL_CFGDIR` with
//! a file source (sed on a file, as ClusterShell's own `local`), a command
//! source (two names in one section), a genders source (real `nodeattr`),
//! a `groups.d` YAML file of two sources, and sources that hang or fail.
//! Every expression is also given to ClusterShell's `nodeset` with the
//! same directory, and both must print the same. Skips with a message
//! when ClusterShell (or, for its part, genders) is missing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use tether_testkit::Scratch;

mod exec_kit;

const TETHER: &str = env!("CARGO_BIN_EXE_tether");

/// A secret-named variable the upcalls can see; no error may show it.
const SECRET: (&str, &str) = ("GROUPS_TEST_SECRET", "s3cr3t-value-9f2c");

/// A site's group configuration in a scratch directory.
struct Site {
    scratch: Scratch,
    /// tether's config (its `[groups]`, `[group_sources]`).
    config: PathBuf,
}

fn have(tool: &str, package: &str) -> bool {
    let found = Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        eprintln!("SKIPPED: {tool} is not installed (scripts/test installs {package})");
    }
    found
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

impl Site {
    /// The site, with `tether_config` as tether's config.
    fn new(tether_config: &str) -> Site {
        let scratch = Scratch::new("groups");
        let d = &scratch.0;
        write(
            &d.join("groups.conf"),
            "[Main]\n\
             default: files\n\
             confdir: $CFGDIR/groups.conf.d\n\
             autodir: $CFGDIR/groups.d\n\
             \n\
             # As ClusterShell's `local`: one `group: nodes` line each.\n\
             [files]\n\
             map: sed -n 's/^$GROUP:\\(.*\\)/\\1/p' $CFGDIR/nodes.txt\n\
             all: sed -n 's/^all:\\(.*\\)/\\1/p' $CFGDIR/nodes.txt\n\
             list: sed -n 's/^\\([0-9A-Za-z_-]*\\):.*/\\1/p' $CFGDIR/nodes.txt\n\
             \n\
             [cmd,cmd2]\n\
             map: echo \"$SOURCE-$GROUP-[1-3]\"; echo $GROUP >> $CFGDIR/asked\n\
             list: echo x y\n\
             \n\
             [hosts]\n\
             map: echo 127.0.0.[2-3]; echo $GROUP >> $CFGDIR/asked-hosts\n\
             \n\
             [rev]\n\
             map: awk '$2 == \"$GROUP\" {print $1}' $CFGDIR/rev.txt\n\
             list: awk '{print $2}' $CFGDIR/rev.txt | sort -u\n\
             reverse: awk '$1 == \"$NODE\" {print $2}' $CFGDIR/rev.txt; echo $NODE >> $CFGDIR/asked-rev\n\
             \n\
             [hang]\n\
             map: sleep 300 & echo $! > $CFGDIR/hang.pid; wait\n\
             \n\
             [fail]\n\
             map: echo \"no partition $GROUP (seen $GROUPS_TEST_SECRET)\" >&2; exit 3\n",
        );
        write(
            &d.join("nodes.txt"),
            "web: web[01-04]\ndb: db1 db2\nfront: @web,lb1\nall: web[01-04],db[1-2],lb1\n",
        );
        write(
            &d.join("rev.txt"),
            "r1 red\nr2 red\nr3 blue\nr4 green\nr2 blue\n",
        );
        write(
            &d.join("groups.conf.d/genders.conf"),
            "[genders]\n\
             map: nodeattr -f $CFGDIR/../genders -n $GROUP\n\
             all: nodeattr -f $CFGDIR/../genders -A\n\
             list: nodeattr -f $CFGDIR/../genders -l\n",
        );
        write(
            &d.join("genders"),
            "g1 login,os=deb\ng2 compute,os=deb\ng[3-6] compute\n",
        );
        write(
            &d.join("groups.d/site.yaml"),
            "roles:\n  adm: 'e0'\n  io: '@racks:rack2,e2'\n  compute: '@racks:rack[1-2]'\nracks:\n  rack1: 'e[0,2]'\n  rack2:\n    - 'e[4-5]'\n    - e7\n  old: '@rack[1-2]'\n",
        );
        let config = d.join("tether.toml");
        write(&config, tether_config);
        Site { scratch, config }
    }

    fn dir(&self) -> &Path {
        &self.scratch.0
    }

    /// `program` with this site's ClusterShell directory (and no user's).
    fn env(&self, program: &str) -> Command {
        let mut c = Command::new(program);
        c.env("CLUSTERSHELL_CFGDIR", self.dir())
            .env("XDG_CONFIG_HOME", self.dir().join("xdg"))
            .env(SECRET.0, SECRET.1);
        c
    }

    /// `tether hosts ARGS` with this site's config.
    fn hosts(&self, args: &[&str]) -> Output {
        self.env(TETHER)
            .arg("hosts")
            .arg("--config")
            .arg(&self.config)
            .args(args)
            .output()
            .unwrap()
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// (`nodeset -s SOURCE` or none, ClusterShell's expression, tether's).
const SAME: &[(Option<&str>, &str, &str)] = &[
    (None, "@web", "@web"),
    (None, "@front!web02", "@front!web02"),
    (None, "@*", "@*"),
    (None, "@web&web0[2-9],@db", "@web&web0[2-9],@db"),
    (Some("files"), "@db", "@files:db"),
    (None, "@files:*", "@files:*"),
    (Some("cmd"), "@x", "@cmd:x"),
    (Some("cmd2"), "@y", "@cmd2:y"),
    (None, "@cmd:*", "@cmd:*"),
    (None, "@cmd:x,@cmd2:x", "@cmd:x,@cmd2:x"),
    (Some("roles"), "@io", "@roles:io"),
    (Some("roles"), "@compute", "@roles:compute"),
    (Some("racks"), "@old", "@racks:old"),
    (Some("racks"), "@rack[1-2]", "@racks:rack[1-2]"),
    (None, "@roles:*", "@roles:*"),
    (
        None,
        "@roles:compute!@racks:rack1",
        "@roles:compute!@racks:rack1",
    ),
    (None, "@@racks", "@@racks"),
];

const GENDERS: &[(Option<&str>, &str, &str)] = &[
    (Some("genders"), "@compute", "@genders:compute"),
    (Some("genders"), "@os=deb", "@genders:os=deb"),
    (None, "@genders:*", "@genders:*"),
    (
        None,
        "@genders:compute!@genders:os=deb",
        "@genders:compute!@genders:os=deb",
    ),
];

#[test]
fn hosts_agrees_with_nodeset_on_every_kind_of_source() {
    if !have("nodeset", "clustershell") {
        return;
    }
    let site = Site::new("");
    let mut cases = SAME.to_vec();
    if have("nodeattr", "genders") {
        cases.extend_from_slice(GENDERS);
    }
    for (source, theirs, ours) in cases {
        for mode in ["-e", "-f", "-c"] {
            let mut ns = site.env("nodeset");
            if let Some(s) = source {
                ns.args(["-s", s]);
            }
            let want = ns.args([mode, theirs]).output().unwrap();
            assert!(
                want.status.success() && !want.stdout.is_empty(),
                "nodeset {source:?} {mode} {theirs}: {want:?}"
            );
            let got = site.hosts(&[mode, ours]);
            assert_eq!(
                text(&got.stdout),
                text(&want.stdout),
                "{mode} {ours} (nodeset {source:?} {theirs}); tether said {}",
                text(&got.stderr)
            );
        }
    }
    // Each group asked once per run, however often the run names it.
    std::fs::remove_file(site.dir().join("asked")).unwrap();
    let got = site.hosts(&["-f", "@cmd:x,@cmd:x!@cmd:y,@cmd:x"]);
    assert_eq!(text(&got.stdout), "cmd-x-[1-3]\n");
    let asked = std::fs::read_to_string(site.dir().join("asked")).unwrap();
    assert_eq!(asked, "x\ny\n");
}

#[test]
fn tethers_groups_are_a_source_and_listed_with_the_others() {
    if !have("nodeset", "clustershell") {
        return;
    }
    let site = Site::new("[groups]\nweb = \"t[1-2]\"\nmine = \"@web,@db\"\n");
    for (expr, want) in [
        // A bare name is tether's when its [groups] has it ...
        ("@web", "t[1-2]"),
        ("@tether:web", "t[1-2]"),
        // ... else the default source's.
        ("@db", "db[1-2]"),
        ("@files:web", "web[01-04]"),
        ("@mine", "db[1-2],t[1-2]"),
        ("@tether:*", "db[1-2],t[1-2]"),
    ] {
        let got = site.hosts(&["-f", expr]);
        assert_eq!(text(&got.stdout), format!("{want}\n"), "{expr}: {got:?}");
    }
    let listed = site.hosts(&["--list-groups"]);
    assert!(listed.status.success(), "{listed:?}");
    let listed = text(&listed.stdout);
    for row in [
        "@web\t2\ttether\tt[1-2]\n",
        "@mine\t4\ttether\tdb[1-2],t[1-2]\n",
        "@files:web\t4\tfiles\tweb[01-04]\n",
        "@db\t2\tfiles\tdb[1-2]\n",
        "@cmd2:y\t3\tcmd2\tcmd2-y-[1-3]\n",
        "@racks:rack2\t3\tracks\te[4-5,7]\n",
    ] {
        assert!(listed.contains(row), "{row:?} not in:\n{listed}");
    }
    // The sources without a list say so in their row.
    assert!(listed.contains("-\terror\thosts\t"), "{listed}");
    // What is unknown is told with what exists.
    let e = text(&site.hosts(&["@nope"]).stderr);
    assert!(
        e.contains("@nope")
            && e.contains("tether's [groups] has mine, web")
            && e.contains("source \"files\" has web, db, front, all")
            && e.contains("files (the default)")
            && e.contains("racks"),
        "{e}"
    );
    let e = text(&site.hosts(&["@roles:nope"]).stderr);
    assert!(e.contains("adm, io, compute"), "{e}");
    let e = text(&site.hosts(&["@nosuch:web"]).stderr);
    assert!(
        e.contains("unknown group source \"nosuch\"") && e.contains("genders"),
        "{e}"
    );
    // A name the shell would read never reaches an upcall.
    let e = text(&site.hosts(&["@cmd:x;touch${IFS}pwned"]).stderr);
    assert!(e.contains("has a character the shell reads"), "{e}");
    assert!(!site.dir().join("pwned").exists());
}

#[test]
fn a_hung_upcall_is_killed_and_a_failed_one_told_with_its_stderr() {
    let site = Site::new("[group_sources]\ntimeout = 1\n");
    let out = site.hosts(&["@hang:g1"]);
    assert_eq!(out.status.code(), Some(255), "{out:?}");
    let e = text(&out.stderr);
    assert!(
        e.contains("group source \"hang\"")
            && e.contains("map upcall `sleep 300 &")
            && e.contains("did not finish in 1s"),
        "{e}"
    );
    // The command's children were killed with it.
    let pid = std::fs::read_to_string(site.dir().join("hang.pid")).unwrap();
    let stat = format!("/proc/{}/stat", pid.trim());
    let deadline = Instant::now() + Duration::from_secs(10);
    while std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(Instant::now() < deadline, "sleep {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = site.hosts(&["@fail:gpu"]);
    let e = text(&out.stderr);
    assert!(
        e.contains("group source \"fail\"")
            && e.contains("exited with code 3")
            && e.contains("no partition gpu (seen [redacted])"),
        "{e}"
    );
    assert!(!e.contains(SECRET.1), "{e}");
}

#[test]
fn exec_runs_on_the_hosts_of_a_source_group() {
    let Some(f) = exec_kit::start() else { return };
    let site = Site::new("");
    let out = f
        .command(None, "@hosts:pair", &["--output", "gather"], "echo hi")
        .env("CLUSTERSHELL_CFGDIR", site.dir())
        .env("XDG_CONFIG_HOME", site.dir().join("xdg"))
        .output()
        .unwrap();
    assert_eq!(
        text(&out.stdout),
        "-----------------\n127.0.0.[2-3] (2)\n-----------------\nhi\n",
        "{out:?}"
    );
    // One upcall for the run.
    let asked = std::fs::read_to_string(site.dir().join("asked-hosts")).unwrap();
    assert_eq!(asked, "pair\n");
}

/// The `@group nodes` rows of `tether hosts --list-groups` (those of
/// `source`), sorted, as `nodeset -ll` prints them.
fn listed_of(out: &Output, source: &str) -> Vec<String> {
    let mut rows: Vec<String> = text(&out.stdout)
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 4 && f[2] == source).then(|| format!("{} {}", f[0], f[3]))
        })
        .collect();
    rows.sort();
    rows
}

#[test]
fn groups_of_nodes_by_reverse_upcall_or_by_map() {
    if !have("nodeset", "clustershell") {
        return;
    }
    let site = Site::new("");
    for (source, nodes) in [("rev", "r[1-3]"), ("rev", "r4,r9"), ("files", "web01,db2")] {
        let _ = std::fs::remove_file(site.dir().join("asked-rev"));
        let ours = site.hosts(&["--list-groups", nodes]);
        assert!(ours.status.success(), "{ours:?}");
        let asked = std::fs::read_to_string(site.dir().join("asked-rev")).unwrap_or_default();
        // The default source's groups are named bare, as tether does.
        let mut ns = site.env("nodeset");
        if source != "files" {
            ns.args(["-s", source]);
        }
        let theirs = ns.args(["-ll", nodes]).output().unwrap();
        let mut want: Vec<String> = text(&theirs.stdout).lines().map(str::to_owned).collect();
        want.sort();
        assert!(!want.is_empty(), "{theirs:?}");
        assert_eq!(listed_of(&ours, source), want, "{source} {nodes}");
        if source == "rev" {
            // Found by the reverse upcall, asked once per node.
            let mut asked: Vec<String> = asked.lines().map(str::to_owned).collect();
            asked.sort();
            let each = tether_cluster::NodeSet::parse(nodes).unwrap().names();
            assert_eq!(asked, each, "{nodes}");
        }
    }
}

/// The folded set after pdsh's "Target nodes" (its own `-q`, or
/// tether's).
fn targets(out: &Output) -> String {
    let t = text(&out.stdout);
    let mut lines = t.lines();
    while let Some(l) = lines.next() {
        if l.starts_with("-- Target nodes --") {
            return lines.next().unwrap_or("").trim().to_owned();
        }
        if let Some(rest) = l.strip_prefix("Target nodes") {
            return rest.trim().to_owned();
        }
    }
    panic!("no target nodes in {out:?}")
}

#[test]
fn pdsh_mode_takes_genders_attributes_as_pdsh_does() {
    if !have("nodeattr", "genders") || !have("pdsh", "pdsh") {
        return;
    }
    let site = Site::new("");
    let genders = site.dir().join("genders");
    for flags in [
        &["-g", "compute"][..],
        &["-g", "compute", "-X", "os=deb"],
        &["-g", "login,os=deb"],
        &["-w", "g1,g2,g9", "-g", "login"],
        &["-w", "g1,g2,g9", "-X", "login"],
    ] {
        let theirs = Command::new("pdsh")
            .arg("-F")
            .arg(&genders)
            .args(flags)
            .arg("-q")
            .output()
            .unwrap();
        let ours = site
            .env(TETHER)
            .arg("pdsh")
            .args(flags)
            .arg("-q")
            .output()
            .unwrap();
        assert_eq!(targets(&ours), targets(&theirs), "{flags:?}: {ours:?}");
    }
    let out = site
        .env(TETHER)
        .args(["pdsh", "-g", "compute&&os=deb", "-q"])
        .output()
        .unwrap();
    assert!(text(&out.stderr).contains("not queries"), "{out:?}");
}
