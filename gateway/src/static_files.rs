//! `--static DIR`: `DIR/www` at `/www/` and `DIR/pkg` at `/pkg/`, and nothing else, so
//! that pointing DIR at the repo root exposes no other file.
//!
//! A request gets a regular file whose resolved path (symlinks followed) stays inside
//! its folder, and whose path there has no segment starting with a dot. Anything else is
//! 404: a symlink out of the folder, `.env`, `.git/config`, `/pkg/.inputs-hash`. A folder
//! answers its `index.html`, and a folder named without its final `/` redirects to it.
//! `ServeFile` then handles content types, ranges and conditional requests.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use axum::extract::{Path as UrlPath, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use axum::Router;
use tower_http::services::ServeFile;

/// Adds the routes for `DIR/www` and `DIR/pkg`, and `/` redirecting to `/www/`.
pub(crate) fn routes(router: Router, dir: &Path) -> Router {
    let mut router = router.route("/", get(|| async { Redirect::temporary("/www/") }));
    for name in ["www", "pkg"] {
        let folder = Arc::new(dir.join(name));
        let top = folder.clone();
        let prefix = format!("/{name}/");
        router = router
            .route(
                &format!("/{name}"),
                get(move || async move { Redirect::temporary(&prefix) }),
            )
            .route(
                &format!("/{name}/"),
                get(move |request: Request| serve(top, String::new(), request)),
            )
            .route(
                &format!("/{name}/{{*path}}"),
                get(move |UrlPath(path): UrlPath<String>, request: Request| {
                    serve(folder, path, request)
                }),
            );
    }
    router
}

/// What a path inside a folder names.
#[derive(Debug, PartialEq)]
enum Target {
    /// A regular file, by its resolved path.
    File(PathBuf),
    /// A folder named without its final `/`.
    Folder,
}

async fn serve(folder: Arc<PathBuf>, path: String, request: Request) -> Response {
    match resolve(&folder, &path).await {
        Some(Target::File(file)) => match ServeFile::new(file).try_call(request).await {
            Ok(response) => response.into_response(),
            Err(_) => StatusCode::NOT_FOUND.into_response(),
        },
        Some(Target::Folder) => {
            let uri = request.uri();
            let query = uri.query().map(|q| format!("?{q}")).unwrap_or_default();
            Redirect::temporary(&format!("{}/{query}", uri.path())).into_response()
        }
        None => StatusCode::NOT_FOUND.into_response(),
    }
}

/// Resolves `path` (percent-decoded, relative to `folder`) to what may be served, or
/// `None` for a 404.
async fn resolve(folder: &Path, path: &str) -> Option<Target> {
    if path.split('/').any(|segment| segment.starts_with('.')) {
        return None;
    }
    let root = tokio::fs::canonicalize(folder).await.ok()?;
    let target = tokio::fs::canonicalize(root.join(path.trim_start_matches('/')))
        .await
        .ok()?;
    // A symlink may lead out of the folder, or to a hidden file inside it: checked on the
    // resolved path before anything, even a redirect, says what is there.
    if !visible_inside(&root, &target) {
        return None;
    }
    let meta = tokio::fs::metadata(&target).await.ok()?;
    if meta.is_file() {
        return Some(Target::File(target));
    }
    if !meta.is_dir() {
        return None;
    }
    if !path.is_empty() && !path.ends_with('/') {
        return Some(Target::Folder);
    }
    let index = tokio::fs::canonicalize(target.join("index.html"))
        .await
        .ok()?;
    let is_file = tokio::fs::metadata(&index).await.ok()?.is_file();
    (is_file && visible_inside(&root, &index)).then_some(Target::File(index))
}

/// Whether resolved `path` lies under `root` with no hidden segment on the way.
fn visible_inside(root: &Path, path: &Path) -> bool {
    path.strip_prefix(root).is_ok_and(|inside| {
        inside.components().all(|c| match c {
            Component::Normal(name) => !name.as_encoded_bytes().starts_with(b"."),
            _ => false,
        })
    })
}
