//! Throwaway Postgres servers for the tests, from Debian's `postgresql`
//! package: `initdb` into a temporary directory (as the `postgres` user
//! when the tests run as root: Postgres refuses root), then `pg_ctl` on a
//! Unix socket in that directory, no TCP, `fsync=off`. One server per test
//! binary is shared ([`shared`]); a test that stops its database starts
//! one of its own ([`Postgres::start`]). A watchdog stops each server and
//! removes its directory when the test process is gone.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Set to `postgres` to run the suites on Postgres: [`crate::TempDir::database`]
/// then names a fresh Postgres database instead of a SQLite file.
pub const BACKEND_VAR: &str = "TTT_TEST_DATABASE";

/// Whether the suites run on Postgres ([`BACKEND_VAR`]).
pub fn chosen() -> bool {
    std::env::var(BACKEND_VAR).is_ok_and(|v| v == "postgres")
}

/// A Postgres server of the tests.
pub struct Postgres {
    bin: PathBuf,
    /// Its directory: the data in `data`, the socket beside it.
    dir: PathBuf,
    /// Runs Postgres's programs as `postgres` when the tests run as root.
    as_user: Option<String>,
}

/// Where Debian's `postgresql` package puts `initdb` and `pg_ctl` (not on
/// `PATH`): the newest version's directory; else `PATH`'s.
fn bindir() -> Option<PathBuf> {
    let mut versions: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin"))
        .filter(|b| b.join("initdb").is_file() && b.join("pg_ctl").is_file())
        .collect();
    versions.sort_by_key(|p| {
        p.parent().and_then(|v| v.file_name()).and_then(|v| v.to_str()).and_then(|v| v.parse::<u32>().ok())
    });
    versions.pop().or_else(|| crate::tools::find("initdb").and_then(|p| p.parent().map(Path::to_owned)))
}

fn root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

impl Postgres {
    /// Starts a new server in a fresh directory; a missing `postgresql`
    /// package fails the test here with one line naming it.
    pub fn start() -> Postgres {
        let Some(bin) = bindir() else {
            panic!(
                "this test needs Postgres (`initdb`, `pg_ctl`), which is not installed: apt-get install {}",
                crate::tools::package("postgres")
            )
        };
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("ttt-pg-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("create Postgres's directory");
        let as_user = root().then(|| "postgres".to_owned());
        if as_user.is_some() {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))
                .expect("open the directory");
        }
        let pg = Postgres { bin, dir, as_user };
        let data = pg.data();
        pg.run(
            "initdb",
            &["-D", &data, "-A", "trust", "-U", "ttt", "--no-sync", "-E", "UTF8", "--locale", "C"],
        );
        pg.resume();
        pg.watch();
        pg
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// Runs one of Postgres's programs and waits for it; a failure fails the test.
    fn run(&self, program: &str, args: &[&str]) {
        let exe = self.bin.join(program);
        let mut cmd = match &self.as_user {
            Some(user) => {
                let mut c = Command::new("runuser");
                c.args(["-u", user, "--"]).arg(&exe);
                c
            }
            None => Command::new(&exe),
        };
        let out =
            cmd.args(args).stdin(Stdio::null()).output().unwrap_or_else(|e| panic!("run {program}: {e}"));
        assert!(
            out.status.success(),
            "{program} {args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Starts (or starts again) the server and waits until it takes connections.
    pub fn resume(&self) {
        let options = format!(
            "-k {} -c listen_addresses= -c fsync=off -c full_page_writes=off \
             -c max_connections=400 -c shared_buffers=32MB",
            self.dir.display()
        );
        let log = self.dir.join("log").display().to_string();
        self.run("pg_ctl", &["-D", &self.data(), "-l", &log, "-o", &options, "-w", "-t", "30", "start"]);
    }

    /// Stops the server at once, as a crash would (`pg_ctl stop -m immediate`).
    pub fn crash(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }

    /// Freezes the server and its connections (SIGSTOP): a Postgres that
    /// stops answering without closing anything, as a hung host does.
    pub fn freeze(&self) {
        self.signal("STOP");
    }

    /// Lets a frozen server go on (SIGCONT).
    pub fn thaw(&self) {
        self.signal("CONT");
    }

    /// Sends `signal` to the postmaster and every process it started.
    fn signal(&self, signal: &str) {
        let pid = std::fs::read_to_string(self.dir.join("data/postmaster.pid")).expect("postmaster.pid");
        let pid = pid.lines().next().unwrap_or_default().trim().to_owned();
        let children = Command::new("ps").args(["-o", "pid=", "--ppid", &pid]).output().expect("ps");
        let mut pids = vec![pid];
        pids.extend(String::from_utf8_lossy(&children.stdout).split_whitespace().map(str::to_owned));
        let status = Command::new("kill").arg(format!("-{signal}")).args(&pids).status().expect("kill");
        assert!(status.success(), "kill -{signal} {pids:?}");
    }

    /// Stops the server and removes its directory when this process is
    /// gone, however it ends (a watchdog process, as root if need be).
    fn watch(&self) {
        let script = format!(
            "while kill -0 {pid} 2>/dev/null; do sleep 0.5; done; \
             kill -QUIT $(head -1 {data}/postmaster.pid 2>/dev/null) 2>/dev/null; sleep 1; rm -rf {dir}",
            pid = std::process::id(),
            data = self.data(),
            dir = self.dir.display()
        );
        let _ = Command::new("sh")
            .args(["-c", &script])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn();
    }

    /// A fresh, empty database on this server, named after `label`: its
    /// `--database` URL, in libpq's form for a Unix socket.
    pub fn database(&self, label: &str) -> String {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let clean: String = label
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' })
            .collect();
        let name = format!("t{n}_{}", &clean[..clean.len().min(40)]);
        let host = self.dir.display().to_string();
        self.run("createdb", &["-h", &host, "-U", "ttt", &name]);
        self.url(&name)
    }

    /// The URL of database `name` on this server.
    pub fn url(&self, name: &str) -> String {
        format!("postgres://ttt@/{name}?host={}&port=5432", self.dir.display())
    }

    /// Runs `sql` on database `name` with `psql` and returns what it
    /// prints (unaligned, tuples only): for a test to look at the rows.
    pub fn psql(&self, name: &str, sql: &str) -> String {
        self.try_psql(name, sql).unwrap_or_else(|e| panic!("psql {sql:?}: {e}"))
    }

    /// Runs `sql` like [`Postgres::psql`]; its error output if it fails.
    pub fn try_psql(&self, name: &str, sql: &str) -> Result<String, String> {
        let host = self.dir.display().to_string();
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", &host, "-U", "ttt", "-d", name, "-At", "-v", "ON_ERROR_STOP=1", "-c", sql])
            .output()
            .expect("run psql");
        match out.status.success() {
            true => Ok(String::from_utf8_lossy(&out.stdout).into_owned()),
            false => Err(String::from_utf8_lossy(&out.stderr).into_owned()),
        }
    }
}

/// The test binary's shared server, started the first time it is asked for.
pub fn shared() -> &'static Postgres {
    static SHARED: OnceLock<Postgres> = OnceLock::new();
    SHARED.get_or_init(Postgres::start)
}

/// SQL that makes a `psql` session hold the saved game in `room` as its
/// instance does (its name and epoch): what it writes to that game next is
/// taken as the holder's own, not refused.
pub fn as_holder_of(room: &str) -> String {
    format!(
        "SELECT set_config('ttt.owner', owner, false), set_config('ttt.epoch', epoch::text, false) \
         FROM live_games WHERE room = '{room}'; "
    )
}

/// The name of the database in a URL of [`Postgres::url`].
pub fn name_of(url: &str) -> &str {
    url.split_once("@/").and_then(|(_, rest)| rest.split('?').next()).unwrap_or_default()
}
