//! Saving the server an add-server link proposes (`add_link` reads the link), once the user
//! pressed Add. A link never takes a name Perch already knows: not a server's (bundled or the
//! user's, in any case, turned off or not), nor one that permissions name (a rule, a grant
//! for a conversation, left from a server removed since). Rules and grants are matched by
//! server name, so under a known name they would apply to the link's program at once, without
//! the user ever having allowed it anything.

use super::Engine;
use perch_mcp_client::add_link::ProposedServer;
use perch_mcp_client::config::{self, ConfigError};

/// Why a link's server was not added.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddLinkError {
    #[error(
        "permissions you gave name a server {name:?} ({}), and they would apply to the link's program: revoke them in Settings -> Permissions first if you mean to add it, then open the link again",
        permissions.join("; ")
    )]
    NamedByPermissions { name: String, permissions: Vec<String> },
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Edit(#[from] perch_mcp_client::EditError),
    #[error(transparent)]
    Permissions(#[from] super::permissions::PermissionError),
}

/// Whether a link may add a server named `name`: `Ok` when no server and no permission has
/// that name, else why not (shown in the link's dialog instead of Add).
pub async fn check_name(engine: &Engine, name: &str) -> Result<(), AddLinkError> {
    if let Some(existing) = config::taken_name(engine.data_dir().root(), name)? {
        return Err(ConfigError::NameTaken { existing }.into());
    }
    let permissions = super::permissions::naming_server(engine, name).await?;
    if !permissions.is_empty() {
        return Err(AddLinkError::NamedByPermissions { name: name.to_owned(), permissions });
    }
    Ok(())
}

/// Adds the server `proposal` describes (the user pressed Add), after [`check_name`]. The
/// servers file is written only if no server took the name meanwhile. Returns the names added.
pub async fn add(engine: &Engine, proposal: &ProposedServer) -> Result<Vec<String>, AddLinkError> {
    check_name(engine, &proposal.name).await?;
    Ok(engine.mcp().add_new(&proposal.json).await?)
}
