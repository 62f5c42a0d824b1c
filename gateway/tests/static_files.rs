//! `--static DIR` over HTTP against the real gateway: only regular, non-hidden files whose
//! resolved path stays under `DIR/www` or `DIR/pkg` are served.

mod support;

use std::net::SocketAddr;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use support::{gateway, WAIT};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// What a GET answered.
#[derive(Debug, PartialEq)]
struct Answer {
    /// The status line, e.g. `HTTP/1.1 200 OK`.
    status: String,
    location: Option<String>,
    body: String,
}

/// A raw HTTP/1.1 GET, so that the path reaches the gateway exactly as written.
async fn get(addr: SocketAddr, path: &str) -> Answer {
    let mut s = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.expect("write");
    let mut response = String::new();
    tokio::time::timeout(WAIT, s.read_to_string(&mut response))
        .await
        .expect("in time")
        .expect("read");
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines.next().unwrap_or_default().to_string();
    let location = lines
        .filter_map(|l| l.split_once(": "))
        .find(|(name, _)| name.eq_ignore_ascii_case("location"))
        .map(|(_, value)| value.to_string());
    Answer {
        status,
        location,
        body: body.to_string(),
    }
}

fn ok(body: &str) -> Answer {
    Answer {
        status: "HTTP/1.1 200 OK".into(),
        location: None,
        body: body.into(),
    }
}

fn not_found() -> Answer {
    Answer {
        status: "HTTP/1.1 404 Not Found".into(),
        location: None,
        body: String::new(),
    }
}

fn redirect(to: &str) -> Answer {
    Answer {
        status: "HTTP/1.1 307 Temporary Redirect".into(),
        location: Some(to.into()),
        body: String::new(),
    }
}

/// A scratch DIR for `--static`, removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let root = std::env::temp_dir().join(format!("quiver-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("mkdir");
        Scratch(root)
    }

    fn write(&self, path: &str, text: &str) {
        let file = self.0.join(path);
        std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
        std::fs::write(file, text).expect("write");
    }

    fn link(&self, path: &str, target: impl AsRef<Path>) {
        symlink(target, self.0.join(path)).expect("symlink");
    }

    async fn serve(&self) -> SocketAddr {
        let mut cfg = quiver_gateway::Config::new("grpc://127.0.0.1:1");
        cfg.static_dir = Some(self.0.clone());
        gateway(cfg).await
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_www_and_pkg_are_served() {
    let dir = Scratch::new("static-folders");
    dir.write("www/index.html", "demo page");
    dir.write("pkg/quiver.js", "glue");
    dir.write("secret.txt", "beside www");
    let addr = dir.serve().await;
    assert_eq!(get(addr, "/www/").await, ok("demo page"));
    assert_eq!(get(addr, "/pkg/quiver.js").await, ok("glue"));
    assert_eq!(get(addr, "/").await, redirect("/www/"));
    assert_eq!(get(addr, "/secret.txt").await, not_found());
    assert_eq!(get(addr, "/www/../secret.txt").await, not_found());
    assert_eq!(get(addr, "/www/%2e%2e/secret.txt").await, not_found());
    assert_eq!(get(addr, "/www//etc/hostname").await, not_found());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn symlinks_out_of_the_folder_are_refused() {
    let dir = Scratch::new("static-symlinks");
    dir.write("www/index.html", "demo page");
    dir.write("secret.txt", "beside www");
    dir.link("www/root-link", "/");
    dir.link("www/parent-link", "..");
    dir.link("www/secret-link.txt", "../secret.txt");
    dir.link("www/page-link.html", "index.html");
    let addr = dir.serve().await;
    // The machine's files, and a file beside www/, through links inside www/.
    assert_eq!(get(addr, "/www/root-link/etc/hostname").await, not_found());
    assert_eq!(get(addr, "/www/parent-link/secret.txt").await, not_found());
    assert_eq!(get(addr, "/www/secret-link.txt").await, not_found());
    // A link that stays inside is served.
    assert_eq!(get(addr, "/www/page-link.html").await, ok("demo page"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_paths_are_refused() {
    let dir = Scratch::new("static-hidden");
    dir.write("www/index.html", "demo page");
    dir.write("www/.env", "SECRET=1");
    dir.write("www/.git/config", "[core]");
    dir.write("pkg/.inputs-hash", "abc");
    dir.link("www/.alias.html", "index.html");
    dir.link("www/env-link", ".env");
    let addr = dir.serve().await;
    for path in [
        "/www/.env",
        "/www/%2Eenv",
        "/www/.git/config",
        "/pkg/.inputs-hash",
        // A hidden name for a file that could be served...
        "/www/.alias.html",
        // ...and a visible name for a hidden file.
        "/www/env-link",
    ] {
        assert_eq!(get(addr, path).await, not_found(), "{path}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_regular_files_are_served() {
    let dir = Scratch::new("static-regular");
    dir.write("www/index.html", "demo page");
    std::fs::create_dir_all(dir.0.join("www/empty")).expect("mkdir");
    let fifo = std::process::Command::new("mkfifo")
        .arg(dir.0.join("www/pipe"))
        .status()
        .expect("mkfifo");
    assert!(fifo.success());
    let addr = dir.serve().await;
    // Opening a FIFO would wait for a writer forever.
    assert_eq!(get(addr, "/www/pipe").await, not_found());
    // A folder with no index.html is not listed.
    assert_eq!(get(addr, "/www/empty/").await, not_found());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn folders_redirect_to_their_slash_under_their_prefix() {
    let dir = Scratch::new("static-redirects");
    dir.write("www/index.html", "demo page");
    dir.write("www/vendor/index.html", "vendor page");
    dir.write("pkg/quiver.js", "glue");
    let addr = dir.serve().await;
    assert_eq!(get(addr, "/www/vendor").await, redirect("/www/vendor/"));
    assert_eq!(
        get(addr, "/www/vendor?v=2").await,
        redirect("/www/vendor/?v=2")
    );
    assert_eq!(get(addr, "/www/vendor/").await, ok("vendor page"));
    assert_eq!(get(addr, "/www").await, redirect("/www/"));
    assert_eq!(get(addr, "/pkg").await, redirect("/pkg/"));
}
