#![allow(clippy::unwrap_used)] // test helpers unwrap too
//! The launcher as the user Perch really runs as: not root. Tests (and CI) run as root here,
//! where a process keeps its capabilities across `execve`; an ordinary user's process loses
//! them, and the launcher's process 1 once failed to mount its `/proc` because of it, so every
//! command of every real user ran unsandboxed. Run as root, these tests drop to `nobody` with
//! `setpriv` for the launcher and for each control alike; run as another user, they are that
//! user already.
#![cfg(target_os = "linux")]

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use perch_sandbox::{Enforcement, Policy};

const LAUNCHER: &str = env!("CARGO_BIN_EXE_perch-sandbox");
const NOBODY: u32 = 65534;

fn is_root() -> bool {
    nix::unistd::geteuid().is_root()
}

/// `program args` as the unprivileged user.
fn as_user(program: &str, args: &[&str], cwd: &Path) -> Output {
    let mut command = if is_root() {
        let mut c = Command::new("setpriv");
        c.args(["--reuid", &NOBODY.to_string(), "--regid", &NOBODY.to_string(), "--clear-groups", "--"]);
        c.arg(program);
        c
    } else {
        Command::new(program)
    };
    command.args(args).current_dir(cwd).env("HOME", cwd).output().unwrap()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

struct Setup {
    _root: tempfile::TempDir,
    work: PathBuf,
    secret: PathBuf,
}

impl Setup {
    /// A working folder and a hidden one, owned by the unprivileged user, outside `/tmp`, in a
    /// folder every user can pass through: the target folder may sit under root's own home
    /// (mode 0700), where `nobody` could not even enter its working folder.
    fn new() -> Self {
        let base =
            if is_root() { PathBuf::from("/var/tmp") } else { PathBuf::from(env!("CARGO_TARGET_TMPDIR")) };
        let root = tempfile::Builder::new().prefix("perch-test-").tempdir_in(base).unwrap();
        let work = root.path().join("work");
        let secret = root.path().join("secret");
        for dir in [&work, &secret, &work.join(".git/hooks")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(secret.join("key"), "SECRET").unwrap();
        std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
        if is_root() {
            let status =
                Command::new("chown").args(["-R", &NOBODY.to_string()]).arg(root.path()).status().unwrap();
            assert!(status.success());
        }
        Self { _root: root, work, secret }
    }

    fn policy(&self) -> Policy {
        Policy {
            writable: vec![self.work.clone(), PathBuf::from("/tmp")],
            hidden: vec![self.secret.clone()],
            private_tmp: true,
            network: true,
            ..Policy::default()
        }
    }

    fn launch(&self, script: &str) -> Output {
        let mut args: Vec<String> =
            self.policy().to_args().iter().map(|a| a.to_string_lossy().into_owned()).collect();
        args.extend(["--".into(), "bash".into(), "-c".into(), script.into()]);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        as_user(LAUNCHER, &args, &self.work)
    }
}

#[test]
fn the_full_sandbox_is_in_force_for_an_ordinary_user() {
    let s = Setup::new();
    let out = as_user(LAUNCHER, &["--private-tmp", "--no-network", "--probe"], &s.work);
    let found = Enforcement::from_line(&stdout(&out));
    let found = found.unwrap_or_else(|| panic!("no probe line: {}", String::from_utf8_lossy(&out.stderr)));
    if !found.missing().is_empty() {
        assert!(
            std::env::var_os("PERCH_ALLOW_NO_SANDBOX").is_some_and(|v| v == "1"),
            "an ordinary user lacks {:?}: every command would run unsandboxed",
            found.missing()
        );
        return;
    }
    // The command holds no capability, and sees only its namespace's processes.
    let out = s.launch("grep -E '^Cap(Prm|Eff|Amb)' /proc/self/status | awk '{print $2}' | sort -u; id -u; ls /proc | grep -c '^[0-9]'");
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(lines[0], "0000000000000000", "{lines:?} {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_ne!(lines[1], "0", "the command runs as the user, not as root");
    assert!(lines[2].parse::<u32>().unwrap() < 10, "{lines:?}");
}

#[test]
fn an_ordinary_users_command_writes_only_its_folder_and_sees_no_secret() {
    let s = Setup::new();
    let script = format!(
        "cat {secret}/key; echo x > {w}/.git/hooks/pre-commit; echo x > {w}/../planted; echo ok > {w}/made && echo done",
        secret = s.secret.display(),
        w = s.work.display()
    );
    let out = s.launch(&script);
    assert_eq!(stdout(&out), "done", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!s.work.join(".git/hooks/pre-commit").exists(), "the hook was planted");
    assert!(!s.work.join("../planted").exists(), "a write outside got through");
    assert_eq!(std::fs::read_to_string(s.work.join("made")).unwrap(), "ok\n");
    // Control: the same user outside the sandbox reads the secret and plants the hook.
    let out = as_user("bash", &["-c", &script], &s.work);
    assert!(stdout(&out).starts_with("SECRET"), "{}", stdout(&out));
    assert!(s.work.join(".git/hooks/pre-commit").exists());
}

#[test]
fn an_ordinary_users_command_cannot_reach_a_system_socket() {
    let s = Setup::new();
    let run = tempfile::Builder::new()
        .prefix("perch-test-")
        .tempdir_in(if is_root() { "/run" } else { "/tmp" })
        .unwrap();
    std::fs::set_permissions(run.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = run.path().join("system.sock");
    let listener = UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"hello\n");
        }
    });
    let script = format!(
        "python3 -c 'import socket\ntry:\n s=socket.socket(socket.AF_UNIX)\n s.connect({:?})\n print(\"connected\")\nexcept OSError as e:\n print(\"refused\")'",
        path.display().to_string()
    );
    assert_eq!(stdout(&s.launch(&script)), "refused");
    assert_eq!(stdout(&as_user("bash", &["-c", &script], &s.work)), "connected", "control");
}
