// Over 500 lines: one real escape attempt per test, each beside its control.
#![allow(clippy::unwrap_used)] // test helpers unwrap too
//! The red team: each way out of the sandbox that issue 25 names, really attempted through the
//! real launcher on the real kernel, asserted to fail, beside a control that shows the same
//! attempt succeeding where the policy allows it (or without the sandbox). The tests stand in
//! for Perch: the launcher's parent is the test process.
#![cfg(target_os = "linux")]

use std::io::Read;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use perch_sandbox::{Enforcement, Policy};

const LAUNCHER: &str = env!("CARGO_BIN_EXE_perch-sandbox");

fn launch(policy: &Policy, script: &str) -> Output {
    Command::new(LAUNCHER)
        .args(policy.to_args())
        .args(["--", "bash", "-c", script])
        .output()
        .expect("the launcher runs")
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

fn probe(policy: &Policy) -> Enforcement {
    let out = Command::new(LAUNCHER).args(policy.to_args()).arg("--probe").output().unwrap();
    Enforcement::from_line(&stdout(&out))
        .unwrap_or_else(|| panic!("a probe line: {}", String::from_utf8_lossy(&out.stderr)))
}

/// The full sandbox is here. Where it is not (no Landlock, no user namespaces), the test
/// fails: an escape test that passes without a sandbox proves nothing. A machine that cannot
/// have one says so with `PERCH_ALLOW_NO_SANDBOX=1`, and the test is skipped, loudly.
fn sandbox_here() -> bool {
    let found = probe(&Policy { network: true, private_tmp: true, ..Policy::default() });
    if found.missing().is_empty() {
        return true;
    }
    assert!(
        std::env::var_os("PERCH_ALLOW_NO_SANDBOX").is_some_and(|v| v == "1"),
        "this machine lacks {:?}, so the escape cannot be tried; set PERCH_ALLOW_NO_SANDBOX=1 to skip (README)",
        found.missing()
    );
    eprintln!("SKIPPED: this machine lacks {:?} and PERCH_ALLOW_NO_SANDBOX=1 is set", found.missing());
    false
}

/// A project folder the command may change, a home beside it, and the policy Perch gives.
struct Setup {
    _root: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
    runtime: PathBuf,
    data: PathBuf,
}

impl Setup {
    fn new() -> Self {
        // Not under /tmp, which the command sees as its own empty folder.
        let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
        let work = root.path().join("home/src/app");
        let home = root.path().join("home");
        let runtime = root.path().join("run/user/1000");
        let data = home.join(".local/share/perch");
        for dir in [&work, &runtime, &data, &home.join(".ssh"), &home.join(".config")] {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(data.join("keys.enc"), "the key store").unwrap();
        std::fs::write(home.join(".ssh/id_ed25519"), "PRIVATE KEY").unwrap();
        std::fs::write(home.join(".netrc"), "machine x password y").unwrap();
        std::fs::write(home.join("notes.txt"), "the user's notes").unwrap();
        Self { _root: root, work, home, runtime, data }
    }

    fn policy(&self) -> Policy {
        Policy {
            writable: vec![self.work.clone(), PathBuf::from("/tmp")],
            read_only: Vec::new(),
            hidden: vec![
                self.runtime.clone(),
                self.data.clone(),
                self.home.join(".ssh"),
                self.home.join(".netrc"),
            ],
            private_tmp: true,
            network: true,
            max_abi: None,
        }
    }
}

/// A Unix socket at `path` that answers each connection with "hello".
fn serve_unix(path: &Path) -> std::thread::JoinHandle<()> {
    let listener = UnixListener::bind(path).unwrap();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut stream = stream;
            let _ = std::io::Write::write_all(&mut stream, b"hello\n");
        }
    })
}

/// Bash cannot open Unix sockets; Python can.
fn connect_script(address: &str) -> String {
    format!(
        "python3 -c 'import socket,sys\ntry:\n s=socket.socket(socket.AF_UNIX)\n s.connect({address})\n \
         print(\"connected\", s.recv(16).decode().strip())\nexcept OSError as e:\n print(\"refused\", e)'"
    )
}

#[test]
fn sockets_in_the_session_folder_and_in_tmp_are_out_of_reach() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    // The session bus, ssh-agent, Wayland and Perch's own review socket live in the runtime
    // folder; X11's and tmux's in /tmp.
    let bus = s.runtime.join("bus");
    let _bus = serve_unix(&bus);
    let x11 = tempfile::Builder::new().prefix("perch-x11-").tempdir_in("/tmp").unwrap();
    let display = x11.path().join("X0");
    let _display = serve_unix(&display);
    let mine = s.work.join("own.sock");
    let _mine = serve_unix(&mine);
    // A socket in the command's own folder is reachable where Landlock can say which sockets
    // lie there (ABI 9); below that no Unix socket is.
    let own = if probe(&s.policy()).landlock_abi >= perch_sandbox::SCOPED_UNIX_SOCKETS_ABI {
        "connected hello"
    } else {
        "refused"
    };
    for (path, want) in [(&bus, "refused"), (&display, "refused"), (&mine, own)] {
        let out = launch(&s.policy(), &connect_script(&format!("{:?}", path.display().to_string())));
        assert!(
            stdout(&out).starts_with(want),
            "{}: {} {}",
            path.display(),
            stdout(&out),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // Control: the same sockets answer outside the sandbox.
    let out = Command::new("bash")
        .args(["-c", &connect_script(&format!("{:?}", bus.display().to_string()))])
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "connected hello");
}

/// F4: a system socket under `/run` (docker, libvirt, the system bus) and one elsewhere
/// outside the writable folders (rootless Docker's in the home folder) are out of reach on
/// every kernel: `/run` is an empty folder in the sandbox, and below Landlock ABI 9 no Unix
/// socket can be made; `socketpair` still works.
#[test]
fn system_sockets_and_sockets_in_the_home_folder_are_out_of_reach() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let run = tempfile::Builder::new().prefix("perch-test-").tempdir_in("/run").unwrap();
    let docker = run.path().join("docker.sock");
    let _docker = serve_unix(&docker);
    std::fs::create_dir_all(s.home.join(".docker/run")).unwrap();
    let rootless = s.home.join(".docker/run/docker.sock");
    let _rootless = serve_unix(&rootless);
    for path in [&docker, &rootless] {
        let script = connect_script(&format!("{:?}", path.display().to_string()));
        let out = launch(&s.policy(), &script);
        assert!(stdout(&out).starts_with("refused"), "{}: {}", path.display(), stdout(&out));
        // Control: outside the sandbox both answer.
        let out = Command::new("bash").args(["-c", &script]).output().unwrap();
        assert_eq!(stdout(&out), "connected hello", "{}", path.display());
    }
    let out = launch(&s.policy(), &format!("ls -A /run | wc -l; test -e {} && echo seen", docker.display()));
    assert_eq!(stdout(&out), "0", "/run is empty in the sandbox: {}", stdout(&out));
    let pair = "python3 -c 'import socket\na,b=socket.socketpair()\na.send(b\"x\")\nprint(\"paired\", b.recv(1).decode())'";
    assert_eq!(stdout(&launch(&s.policy(), pair)), "paired x");
}

/// F2: every repository's metadata in a writable folder stays read-only, whatever folder the
/// command starts in: a `.git` beneath the writable folder (a folder of repositories, a
/// command in a subfolder), a worktree's `.git` file and the folder it names, the hooks
/// folder and included files its configuration names, and the files that run code when the
/// folder is opened. Control: the project's own files stay writable.
#[test]
fn repositories_and_start_up_files_in_a_writable_folder_are_read_only() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    // `work` is home/src/app; home/src, a folder of repositories, is the writable one.
    let src = s.work.parent().unwrap().to_path_buf();
    let repo = &s.work;
    for dir in [".git/hooks", ".git/worktrees/wt", "tools/hooks", "src", ".vscode"] {
        std::fs::create_dir_all(repo.join(dir)).unwrap();
    }
    std::fs::write(
        repo.join(".git/config"),
        "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../team.gitconfig\n",
    )
    .unwrap();
    std::fs::write(repo.join("team.gitconfig"), "").unwrap();
    std::fs::write(repo.join(".envrc"), "").unwrap();
    let worktree = src.join("wt");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::write(worktree.join(".git"), format!("gitdir: {}\n", repo.join(".git/worktrees/wt").display()))
        .unwrap();
    std::fs::write(repo.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
    let attempts = [
        repo.join(".git/hooks/pre-commit"),
        repo.join(".git/config"),
        repo.join("tools/hooks/pre-push"),
        repo.join("team.gitconfig"),
        repo.join(".envrc"),
        repo.join(".vscode/tasks.json"),
        worktree.join(".git"),
        repo.join(".git/worktrees/wt/HEAD"),
    ];
    let policy = Policy { writable: vec![src.clone(), PathBuf::from("/tmp")], ..s.policy() };
    let script: String =
        attempts.iter().map(|p| format!("echo evil >> {} 2>/dev/null; ", p.display())).collect();
    let script = format!("{script} echo ok > {}/src/main.rs && echo done", repo.display());
    // From the repository's subfolder, as the model may ask.
    let out = Command::new(LAUNCHER)
        .args(policy.to_args())
        .args(["--", "bash", "-c", &script])
        .current_dir(repo.join("src"))
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "done", "{}", String::from_utf8_lossy(&out.stderr));
    for path in &attempts {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        assert!(!text.contains("evil"), "{} was written from the sandbox", path.display());
    }
    assert_eq!(
        std::fs::read_to_string(repo.join("src/main.rs")).unwrap(),
        "ok\n",
        "control: the project is writable"
    );
    // Control: without the sandbox the same writes land.
    let out = Command::new("bash").args(["-c", &script]).current_dir(repo.join("src")).output().unwrap();
    assert_eq!(stdout(&out), "done");
    assert!(std::fs::read_to_string(repo.join(".git/hooks/pre-commit")).unwrap().contains("evil"));
}

/// F3: a folder beneath a hidden one (a browser profile, Perch's data, the session's runtime
/// folder) is never mounted again, not as the folder the command starts in, nor as a
/// writable one: the command does not start, and nothing there is read or written.
#[test]
fn a_folder_beneath_a_hidden_one_is_never_brought_back() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let profile = s.data.join("profile");
    std::fs::create_dir_all(&profile).unwrap();
    std::fs::write(profile.join("logins.json"), "SECRET LOGINS").unwrap();
    let out = Command::new(LAUNCHER)
        .args(s.policy().to_args())
        .args(["--", "bash", "-c", "cat logins.json; echo ran"])
        .current_dir(&profile)
        .output()
        .unwrap();
    assert!(!stdout(&out).contains("SECRET"), "read from a hidden folder: {}", stdout(&out));
    assert!(!stdout(&out).contains("ran"), "the command started in a hidden folder");
    assert_ne!(out.status.code(), Some(0));
    // Named as a writable folder, it stays masked too.
    let writable = Policy { writable: vec![s.work.clone(), profile.clone()], ..s.policy() };
    let out = launch(
        &writable,
        &format!("cat {0}/logins.json; echo x > {0}/planted; echo done", profile.display()),
    );
    assert!(!stdout(&out).contains("SECRET"), "{}", stdout(&out));
    assert!(!profile.join("planted").exists());
    // Control: a folder under the private /tmp mask is mounted again, and the command starts there.
    let tmp_work = tempfile::tempdir_in("/tmp").unwrap();
    std::fs::write(tmp_work.path().join("notes"), "kept").unwrap();
    let policy = Policy { writable: vec![tmp_work.path().to_path_buf()], ..s.policy() };
    let out = Command::new(LAUNCHER)
        .args(policy.to_args())
        .args(["--", "bash", "-c", "cat notes"])
        .current_dir(tmp_work.path())
        .output()
        .unwrap();
    assert_eq!(stdout(&out), "kept", "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn abstract_sockets_outside_are_refused() {
    if !sandbox_here() {
        return;
    }
    let name = format!("perch-test-{}", std::process::id());
    // An abstract socket, as an X server or an older session bus listens on.
    let server = Command::new("python3")
        .args([
            "-c",
            &format!(
                "import socket\ns=socket.socket(socket.AF_UNIX)\ns.bind('\\0{name}')\ns.listen()\nprint('up',flush=True)\n\
                 while True:\n c,_=s.accept()\n c.send(b'hello\\n')\n c.close()"
            ),
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut server = KillOnDrop(server);
    let mut up = [0u8; 3];
    server.0.stdout.as_mut().unwrap().read_exact(&mut up).unwrap();
    let address = format!("\"\\0{name}\"");
    let s = Setup::new();
    let out = launch(&s.policy(), &connect_script(&address));
    assert!(stdout(&out).starts_with("refused"), "{}", stdout(&out));
    let control = Command::new("bash").args(["-c", &connect_script(&address)]).output().unwrap();
    assert_eq!(stdout(&control), "connected hello");
    // Below ABI 6 Landlock cannot scope abstract sockets: the seccomp filter refuses them.
    let old = Policy { max_abi: Some(5), ..s.policy() };
    assert_eq!(probe(&old).landlock_abi, 5);
    assert!(probe(&old).seccomp);
    let out = launch(&old, &connect_script(&address));
    assert!(stdout(&out).starts_with("refused"), "ABI 5: {}", stdout(&out));
}

#[test]
fn other_terminals_of_the_user_are_out_of_sight() {
    if !sandbox_here() {
        return;
    }
    // Another terminal of the user's, open in another program (typing there would be read).
    let holder = Command::new("python3")
        .args([
            "-c",
            "import pty,os,sys,time\nm,s=pty.openpty()\nprint(os.ttyname(s),flush=True)\ntime.sleep(60)",
        ])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut holder = KillOnDrop(holder);
    let mut name = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(holder.0.stdout.as_mut().unwrap()), &mut name)
        .unwrap();
    let name = name.trim();
    assert!(name.starts_with("/dev/pts/"), "{name}");
    // `cat` blocks reading a terminal that opened: the timeout's 124 means it was readable.
    let script = format!("timeout 0.3 cat {name} >/dev/null 2>&1; echo $?");
    let s = Setup::new();
    assert_eq!(stdout(&launch(&s.policy(), &script)), "1", "the other terminal opened");
    assert_eq!(stdout(&Command::new("bash").args(["-c", &script]).output().unwrap()), "124");
    // Control: the sandbox can still open terminals of its own.
    let own = "python3 -c 'import pty; pty.openpty(); print(\"opened\")'";
    assert_eq!(stdout(&launch(&s.policy(), own)), "opened");
}

#[test]
fn a_session_bus_is_not_reachable_even_with_its_address() {
    if !sandbox_here() || Command::new("dbus-daemon").arg("--version").output().is_err() {
        eprintln!("skipping: no dbus-daemon");
        return;
    }
    let s = Setup::new();
    let address = format!("unix:path={}", s.runtime.join("bus").display());
    let daemon = Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--nopidfile", &format!("--address={address}")])
        .spawn()
        .unwrap();
    let _daemon = KillOnDrop(daemon);
    // What `systemd-run --user` and the keyring's clients do first: talk to the bus.
    let call = format!(
        "DBUS_SESSION_BUS_ADDRESS={address} dbus-send --session --print-reply --dest=org.freedesktop.DBus \
         /org/freedesktop/DBus org.freedesktop.DBus.ListNames >/dev/null 2>&1 && echo reached || echo refused"
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    while stdout(&Command::new("bash").args(["-c", &call]).output().unwrap()) != "reached" {
        assert!(Instant::now() < deadline, "the control bus never answered");
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(stdout(&launch(&s.policy(), &call)), "refused");
}

#[test]
fn hidden_files_and_folders_read_as_empty() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let script = format!(
        "cat {data}/keys.enc; ls -A {data}; cat {home}/.ssh/id_ed25519; ls -A {home}/.ssh; cat {home}/.netrc; \
         echo ---; cat {home}/notes.txt",
        data = s.data.display(),
        home = s.home.display()
    );
    let out = launch(&s.policy(), &script);
    assert_eq!(stdout(&out).lines().next(), Some("---"), "a secret showed: {}", stdout(&out));
    assert!(stdout(&out).ends_with("the user's notes"), "the control read failed: {}", stdout(&out));
    // Nor through a link the command makes in its own folder: masks are in the mount table,
    // so the link leads to the mask; a hard link across it is refused.
    let script = format!(
        "ln -s {home}/.ssh {w}/keys && cat {w}/keys/id_ed25519; ln {home}/.netrc {w}/netrc 2>/dev/null; \
         cat {w}/netrc 2>/dev/null; echo ---",
        home = s.home.display(),
        w = s.work.display()
    );
    let out = launch(&s.policy(), &script);
    assert_eq!(stdout(&out), "---", "a link reached a secret: {}", stdout(&out));
    // Control: the same link outside the sandbox reads the key.
    let outside = std::fs::read_to_string(s.work.join("keys/id_ed25519")).unwrap();
    assert_eq!(outside, "PRIVATE KEY");
    // A hidden folder is an empty throwaway: writing there changes nothing outside.
    let out = launch(&s.policy(), &format!("echo x > {}/keys.enc; echo done", s.data.display()));
    assert!(stdout(&out).ends_with("done"));
    assert_eq!(std::fs::read_to_string(s.data.join("keys.enc")).unwrap(), "the key store");
}

#[test]
fn home_outside_the_working_folder_is_read_only() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let autostart = s.home.join(".config/autostart");
    let script = format!(
        "mkdir -p {a} && echo '[Desktop Entry]' > {a}/evil.desktop; echo >> {h}/.bashrc; \
         truncate -s 0 {h}/notes.txt; : > {h}/notes.txt; echo made > {w}/made.txt; truncate -s 2 {w}/made.txt; echo done",
        a = autostart.display(),
        h = s.home.display(),
        w = s.work.display()
    );
    let out = launch(&s.policy(), &script);
    assert_eq!(stdout(&out), "done", "{}", String::from_utf8_lossy(&out.stderr));
    assert!(!autostart.exists(), "autostart was written");
    assert!(!s.home.join(".bashrc").exists(), ".bashrc was written");
    assert_eq!(std::fs::read_to_string(s.home.join("notes.txt")).unwrap(), "the user's notes", "truncated");
    // Control: the working folder is writable and truncatable.
    assert_eq!(std::fs::read_to_string(s.work.join("made.txt")).unwrap(), "ma");
}

#[test]
fn below_abi_3_truncate_by_path_is_refused_by_seccomp() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let old = Policy { max_abi: Some(2), ..s.policy() };
    let e = probe(&old);
    assert_eq!(e.landlock_abi, 2);
    assert!(e.missing().iter().any(|m| m.contains("ABI 3")), "ABI 2 is reported as missing something: {e:?}");
    let notes = s.home.join("notes.txt");
    // truncate(2) by path, the call Landlock checks only from ABI 3.
    let script = format!(
        "python3 -c 'import os\ntry:\n os.truncate({:?}, 0)\n print(\"truncated\")\nexcept OSError:\n print(\"refused\")'",
        notes.display().to_string()
    );
    let out = launch(&old, &script);
    assert_eq!(stdout(&out), "refused");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "the user's notes");
}

#[test]
fn nothing_a_command_starts_outlives_it() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    // Three ways to leave a process behind, each marked so we can find it in the real /proc.
    let marks: Vec<String> = (0..3).map(|i| format!("{}.{}{i}", 3000 + i, std::process::id())).collect();
    let script = format!(
        "setsid sleep {0} </dev/null >/dev/null 2>&1 & nohup sleep {1} >/dev/null 2>&1 & \
         (sleep {2} </dev/null >/dev/null 2>&1 &) ; sleep 0.3; echo started",
        marks[0], marks[1], marks[2]
    );
    let out = launch(&s.policy(), &script);
    assert_eq!(stdout(&out), "started");
    let left = wait_until_gone(&marks, Duration::from_secs(5));
    assert!(left.is_empty(), "still running after the command ended: {left:?}");
    // Control: without the sandbox the same line leaves all three behind.
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert_eq!(stdout(&out), "started");
    let left = running_with(&marks);
    for pid in &left {
        let _ = Command::new("kill").arg(pid.to_string()).status();
    }
    assert_eq!(left.len(), 3, "the control left {left:?}");
}

#[test]
fn the_command_dies_with_perch() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let mark = format!("4000.{}", std::process::id());
    // A stand-in for Perch: a shell that starts the launcher, then is killed.
    let perch = Command::new("bash")
        .args([
            "-c",
            &format!(
                "{LAUNCHER} {} -- bash -c 'setsid sleep {mark} </dev/null >/dev/null 2>&1 & sleep {mark}' & sleep 30",
                policy_words(&s.policy())
            ),
        ])
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while running_with(std::slice::from_ref(&mark)).len() < 2 {
        assert!(Instant::now() < deadline, "the command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    let mut perch = perch;
    perch.kill().unwrap();
    perch.wait().unwrap();
    // The launcher's parent is the killed shell: its parent-death signal ends the namespace.
    let left = wait_until_gone(std::slice::from_ref(&mark), Duration::from_secs(5));
    assert!(left.is_empty(), "outlived Perch: {left:?}");
}

#[test]
fn perch_itself_is_out_of_sight_and_out_of_reach() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    let me = std::process::id();
    let script = format!(
        "cat /proc/{me}/environ >/dev/null 2>&1 && echo environ-read || echo environ-hidden; \
         kill -0 {me} 2>/dev/null && echo signal-sent || echo signal-refused; ls /proc | grep -c '^[0-9]'"
    );
    let out = launch(&s.policy(), &script);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    assert_eq!(&lines[..2], ["environ-hidden", "signal-refused"], "{text}");
    // Only the namespace's own few processes are listed.
    assert!(lines[2].parse::<u32>().unwrap() < 10, "{text}");
    // Control: outside, the same reads and signals work.
    let out = Command::new("bash").args(["-c", &script]).output().unwrap();
    assert!(stdout(&out).starts_with("environ-read\nsignal-sent"), "{}", stdout(&out));
}

#[test]
fn the_kernel_key_store_is_refused() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    // keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0): the user's keyring, by number.
    let script = "python3 -c 'import ctypes,os\nlibc=ctypes.CDLL(None,use_errno=True)\n\
                  r=libc.syscall(250,0,-4,0)\nprint(\"refused\" if r<0 and ctypes.get_errno()==1 else \"reached\")'";
    if std::env::consts::ARCH != "x86_64" {
        return;
    }
    assert_eq!(stdout(&launch(&s.policy(), script)), "refused");
    assert_eq!(stdout(&Command::new("bash").args(["-c", script]).output().unwrap()), "reached");
}

/// Ctrl+C in the terminal is SIGINT to the whole foreground process group: the launcher's two
/// stages and the command. The command gets it (it does not start with it blocked, nor ignored
/// when Perch itself was started with Ctrl+C ignored, as `perch &` from a script does) and the
/// launcher carries on to report how the command ended. The signal is sent from outside, as
/// the terminal sends it, once the command says its handler is in place.
#[test]
fn ctrl_c_reaches_the_command_and_not_the_launcher() {
    if !sandbox_here() {
        return;
    }
    let s = Setup::new();
    for ignored_on_entry in [false, true] {
        ctrl_c_reaches_the_command(&s, ignored_on_entry);
    }
    let out = launch(&s.policy(), "exit 7");
    assert_eq!(out.status.code(), Some(7));
    let out = launch(&s.policy(), "kill -TERM $$");
    assert_eq!(out.status.code(), Some(128 + 15));
}

fn ctrl_c_reaches_the_command(s: &Setup, ignored_on_entry: bool) {
    let script = "trap 'echo caught; exit 0' INT; grep SigBlk /proc/self/status; echo ready; \
                  while :; do sleep 0.05; done";
    // `trap '' INT` ignores the signal and the ignoring survives `exec`, as it does for a
    // program started by a shell in the background.
    let entry = if ignored_on_entry { "trap '' INT QUIT; exec \"$0\" \"$@\"" } else { "exec \"$0\" \"$@\"" };
    let mut child = Command::new("bash")
        .args(["-c", entry, LAUNCHER])
        .args(s.policy().to_args())
        .args(["--", "bash", "-c", script])
        .process_group(0)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let group = nix::unistd::Pid::from_raw(i32::try_from(child.id()).unwrap());
    // A command that never reacts would hang the suite: the group ends after a minute (which
    // ends the output below and fails the assertion waiting for it), or at once when an
    // assertion fails first.
    let (done, finished) = std::sync::mpsc::channel::<()>();
    let watchdog = std::thread::spawn(move || {
        if finished.recv_timeout(Duration::from_secs(60)).is_err() {
            let _ = nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGKILL);
        }
    });
    let mut lines = std::io::BufRead::lines(std::io::BufReader::new(child.stdout.take().unwrap()));
    let mut next = || lines.next().and_then(Result::ok).unwrap_or_default();
    let blocked = next();
    assert_eq!(
        blocked.split_whitespace().last(),
        Some("0000000000000000"),
        "the command starts with signals blocked (ignored on entry: {ignored_on_entry})"
    );
    assert_eq!(next(), "ready");
    nix::sys::signal::killpg(group, nix::sys::signal::Signal::SIGINT).unwrap();
    assert_eq!(next(), "caught", "Ctrl+C reaches the command (ignored on entry: {ignored_on_entry})");
    assert_eq!(child.wait().unwrap().code(), Some(0), "the launcher reports the command's own end");
    done.send(()).unwrap();
    watchdog.join().unwrap();
}

fn policy_words(policy: &Policy) -> String {
    policy.to_args().iter().map(|a| format!("'{}'", a.to_string_lossy())).collect::<Vec<_>>().join(" ")
}

/// Host PIDs of processes whose command line holds one of `marks`.
fn running_with(marks: &[String]) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else { continue };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else { continue };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        // The shell that started the marked sleeps names them too; only the sleeps count.
        if cmdline.starts_with("sleep ") && marks.iter().any(|m| cmdline.contains(m.as_str())) {
            let state = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            if !state.contains(") Z ") {
                found.push(pid);
            }
        }
    }
    found
}

fn wait_until_gone(marks: &[String], within: Duration) -> Vec<u32> {
    let deadline = Instant::now() + within;
    loop {
        let left = running_with(marks);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
