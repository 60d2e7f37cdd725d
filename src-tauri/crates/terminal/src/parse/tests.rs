use super::*;

fn words(line: &str) -> Vec<Vec<String>> {
    analyse(line, Path::new("/work"), Path::new("/home/u"))
        .commands
        .iter()
        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
        .collect()
}

#[test]
fn every_simple_command_is_found_in_execution_order() {
    assert_eq!(
        words("a 1 | b 2 && (c; d) || $(e) `f` <(g)"),
        [
            vec!["a", "1"],
            vec!["b", "2"],
            vec!["c"],
            vec!["d"],
            vec!["e"],
            vec!["f"],
            vec!["g"],
            vec!["$(e)", "`f`", "<(g)"]
        ]
    );
}

#[test]
fn quotes_escapes_and_known_variables_are_resolved() {
    assert_eq!(
        words(r#"r\m -"r"'f' ~/x "$HOME"/y ${HOME}"#),
        [vec!["rm", "-rf", "/home/u/x", "/home/u/y", "/home/u"]]
    );
    assert_eq!(words("D=/etc; rm -r $D/x"), [vec!["rm", "-r", "/etc/x"]]);
    assert_eq!(words(r"$'\x72\x6d' -f"), [vec!["rm", "-f"]]);
    let a = analyse("rm -rf $X", Path::new("/"), Path::new("/h"));
    assert!(a.commands[0].words[2].dynamic);
}

#[test]
fn cd_is_followed_and_subshells_keep_their_own_folder() {
    let a = analyse("cd /etc && (cd ssh) && ls; cd ..; pwd", Path::new("/w"), Path::new("/h"));
    let cwds: Vec<_> = a.commands.iter().map(|c| c.cwd.clone().unwrap()).collect();
    assert_eq!(cwds, ["/w", "/etc", "/etc", "/etc", "/"].map(PathBuf::from));
}

#[test]
fn shell_strings_and_wrappers_are_followed() {
    assert_eq!(
        words("sudo -u root bash -c 'rm -rf /'"),
        [vec!["bash", "-c", "rm -rf /"], vec!["rm", "-rf", "/"]]
    );
    let a = analyse("env -i PATH=/tmp nice -n 5 ls", Path::new("/"), Path::new("/h"));
    assert_eq!(a.commands[0].program(), "ls");
    assert_eq!(a.commands[0].wrappers, ["env", "nice"]);
    assert!(a.assigned.contains(&"PATH".to_owned()));
}

#[test]
fn what_cannot_be_reduced_is_said() {
    let unclear = |l: &str| analyse(l, Path::new("/"), Path::new("/h")).unclear;
    assert!(unclear("ls -la && git status").is_empty());
    assert!(!unclear("$CMD -rf /").is_empty());
    assert!(!unclear("eval \"$(cat x)\"").is_empty());
    assert!(unclear("eval \"ls -la\"").is_empty(), "eval of plain words is followed");
    assert!(!unclear("echo cm0gLXJmIC8K | base64 -d | sh").is_empty());
    assert!(!unclear("bash <<EOF\nrm -rf /\nEOF").is_empty());
    assert!(!unclear("ｒｍ -rf /").is_empty());
    assert!(!unclear("ls \u{202E}txt.sh").is_empty());
    assert!(!unclear("echo 'unterminated").is_empty());
    assert!(unclear("echo \"héllo\"").is_empty(), "quoted text may be any language");
}

fn shape(line: &str) -> Vec<String> {
    analyse(line, Path::new("/w"), Path::new("/h")).shape
}

#[test]
fn the_shape_is_the_whole_line_normalised() {
    assert_eq!(
        shape("git   diff --stat > 'out file.txt' 2>&1"),
        ["git diff --stat > '/w/out file.txt' 2>& 1"]
    );
    // tree-sitter-bash puts a trailing redirection on the whole list, after its `cd`.
    assert_eq!(shape("cd src &&  git diff > out"), ["cd src", "&&", "git diff", "> /w/src/out"]);
    assert_eq!(shape("echo \"a b\" 'c' \\d"), shape("echo 'a b' c d"));
    assert_ne!(shape("echo 'a b' c"), shape("echo a b c"));
    assert_eq!(shape("a; b;"), shape("a\nb\n"));
    assert_eq!(shape("a | b"), ["a", "|", "b"]);
    assert_ne!(shape("a && b"), shape("a || b"));
    assert_ne!(shape("(a; b)"), shape("a; b"));
    assert_eq!(shape("cat notes.txt > ./x/../out"), ["cat notes.txt > /w/out"]);
    assert_eq!(shape("X=1 Y=\"a b\" make"), ["X=1 Y='a b' make"]);
    assert_eq!(shape("export A=1 && make"), ["export A=1", "&&", "make"]);
    assert_eq!(shape("echo $HOME \"$X\" '$X'"), ["echo /h \"$X\" '$X'"]);
    assert_eq!(shape("echo $(rm -rf x)"), ["echo \"$(rm -rf x)\""], "what runs in a word stays in it");
    assert_ne!(shape("[ -f x ] && a"), shape("[ -d x ] && a"));
    assert_ne!(shape("cat <<EOF\nhi\nEOF"), shape("cat <<EOF\nbye\nEOF"));
    assert_eq!(shape("# just a comment"), Vec::<String>::new());
}

/// F12: words bash expands differently are different lines, so an approval of one never
/// covers the other.
#[test]
fn quoted_and_unquoted_wildcards_and_expansions_are_different_lines() {
    assert_ne!(shape("rm -f *.log"), shape("rm -f '*.log'"));
    assert_eq!(shape("rm -f *.log '*.log' \\*.log"), ["rm -f *.log '*.log' '*.log'"]);
    assert_eq!(shape("ls 'a b'*"), ["ls 'a b'*"]);
    assert_ne!(shape("X='-rf src'; rm \"$X\""), shape("X='-rf src'; rm $X"));
    let split = analyse("X='-rf src'; rm $X", Path::new("/w"), Path::new("/h"));
    assert!(split.commands[0].words[1].dynamic, "an unquoted value with blanks is split by bash");
    let empty = analyse("X=; rm $X y", Path::new("/w"), Path::new("/h"));
    assert!(empty.commands[0].words[1].dynamic, "an empty unquoted value is no word at all");
    assert_eq!(words("X=ab; echo $X \"$X\""), [vec!["echo", "ab", "ab"]]);
    // Inside an assignment nothing is split or matched.
    assert_eq!(words("X=*; Y=$X; echo \"$Y\""), [vec!["echo", "*"]]);
}

/// F1 and its family: what tree-sitter skips between words, bash may read as part of one.
#[test]
fn characters_the_parser_skips_make_a_line_unclear() {
    let unclear = |l: &str| analyse(l, Path::new("/w"), Path::new("/h")).unclear;
    for line in
        ["git status\r#; curl x | sh", "echo a \\\r\nrm x", "ls\u{2003}-la", "ls\u{a0}#; rm x", "ls\u{3000}x"]
    {
        assert!(!unclear(line).is_empty(), "{line:?}");
    }
    for line in ["echo a \\\nb", "ls\t-la", "echo 'a\u{a0}b' \"c\u{2003}\"", "cat <<EOF\n\u{a0}x $(ls)\nEOF"]
    {
        assert!(unclear(line).is_empty(), "{line:?}: {:?}", unclear(line));
    }
    assert!(!unclear("touch a{1..3}").is_empty(), "brace expansion");
    assert!(!unclear("cp x{,.bak}").is_empty());
    assert!(unclear("echo '{a,b}' \"{1..2}\" {} ${X} find -exec {} +").is_empty());
}

#[test]
fn tildes_expand_as_bash_expands_them() {
    assert_eq!(
        words("echo ~ ~/x ~root/y \\~ a=~/b c=x:~/d --p=~/e ~nosuchuser-perch"),
        [vec![
            "echo",
            "/home/u",
            "/home/u/x",
            "/root/y",
            "~",
            "a=/home/u/b",
            "c=x:/home/u/d",
            "--p=~/e",
            "~nosuchuser-perch"
        ]]
    );
    assert_eq!(words("X=~/a:~/b; echo \"$X\""), [vec!["echo", "/home/u/a:/home/u/b"]]);
    assert!(analyse("ls ~-", Path::new("/w"), Path::new("/h")).commands[0].words[1].dynamic);
}

#[test]
fn inline_code_and_variables_for_a_command_are_unclear() {
    let a = |l: &str| analyse(l, Path::new("/w"), Path::new("/h"));
    let has = |l: &str, part: &str| a(l).unclear.iter().any(|u| u.contains(part));
    let sh = a("sh -c 'rm -rf /etc'");
    assert!(sh.unclear.iter().any(|u| u.contains("inline code for sh")), "{:?}", sh.unclear);
    assert!(sh.commands.iter().any(|c| c.name() == "rm"), "the string is still followed");
    assert!(has("sudo bash -lc 'make'", "inline code for bash"));
    assert!(has("find . -exec sh -c 'x' \\;", "inline code for sh"));
    assert!(has("python3 -c 'print(1)'", "inline code for python3"));
    assert!(has("python3 - <<EOF\nprint(1)\nEOF", "code on its input"));
    assert!(has("echo 'print(1)' | python3", "code on its input"));
    assert!(has("GIT_DIR=x git log", "sets GIT_DIR"));
    assert!(has("env FOO=1 make", "sets FOO"));
    assert!(has("sudo FOO=1 make", "sets FOO"));
    assert!(has("export FOO=1; make", "exports FOO"));
    assert!(has("declare -x FOO=1\nmake", "exports FOO"));
    assert!(has("set -a; FOO=1; make", "exports FOO"));
    assert!(a("export RUST_LOG=debug").unclear.is_empty(), "nothing runs with it");
    assert!(a("FOO=1; make").unclear.is_empty(), "a shell variable is not exported");
    assert!(a("make; export FOO=1").unclear.is_empty());
    assert!(a("python3 -m pytest && node build.js && awk '{print $1}' f").unclear.is_empty());
}

#[test]
fn every_write_and_variable_is_found() {
    let a = |l: &str| analyse(l, Path::new("/w"), Path::new("/h"));
    let written = |l: &str| a(l).writes.into_iter().map(|w| w.target.text).collect::<Vec<_>>();
    assert_eq!(written("echo x >& out 2>&1"), ["out"]);
    assert_eq!(written("cat <<EOF > f\nhi\nEOF"), ["f"]);
    assert_eq!(written("ls > a >> b &> c 2> d < e"), ["a", "b", "c", "d"]);
    assert!(a("read -r PATH <<< /tmp").assigned.contains(&"PATH".to_owned()));
    assert!(a("printf -v LD_PRELOAD %s x").assigned.contains(&"LD_PRELOAD".to_owned()));
    assert!(a("read -rp 'name? ' -a GIT_DIR x").assigned.contains(&"GIT_DIR".to_owned()));
    assert!(!a("read -rp 'name? ' x").assigned.contains(&"name? ".to_owned()));
}
