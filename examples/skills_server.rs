//! An MCP server of skills (the Skills extension, SEP-2640), built on the
//! MCP Rust SDK's `skills-fs` catalogue: every folder under the directory it
//! is given that holds a `SKILL.md` is a skill, served over stdio with
//! `skills/list`, `skills/get`, `resources/read` and
//! `resources/directory/read`.
//!
//! The end-to-end tests run it over `tests/fixtures/skills`; try it with the
//! command line:
//!
//! ```sh
//! cargo build --example skills_server --features rmcp
//! mcp-adapters tools --provider anthropic --skills \
//!     --server docs='target/debug/examples/skills_server tests/fixtures/skills'
//! ```

use std::sync::Arc;

use rmcp::handler::server::skill_catalog::SkillCatalog;
use rmcp::model::{
    GetSkillRequestParams, GetSkillResult, Implementation, ListResourcesResult, ListSkillsResult,
    PaginatedRequestParams, ReadResourceDirectoryRequestParams, ReadResourceDirectoryResult,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};

/// Delegates the skills methods and resource reads to the SDK's catalogue.
#[derive(Clone)]
struct Skills {
    catalog: Arc<SkillCatalog>,
}

impl ServerHandler for Skills {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_resources()
                .enable_skills_with_directory_read()
                .build(),
        )
        .with_server_info(Implementation::new(
            "skills-server",
            env!("CARGO_PKG_VERSION"),
        ))
    }

    async fn list_skills(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListSkillsResult, ErrorData> {
        Ok(self.catalog.list_skills())
    }

    async fn get_skill(
        &self,
        request: GetSkillRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetSkillResult, ErrorData> {
        self.catalog.get_skill(&request.uri)
    }

    async fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceDirectoryResult, ErrorData> {
        self.catalog.read_resource_directory(&request.uri)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(ListResourcesResult::with_all_items(
            self.catalog.resources(),
        ))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.catalog
            .read_resource(&request.uri)
            .map(Into::into)
            .ok_or_else(|| ErrorData::resource_not_found(request.uri, None))
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = std::env::args()
        .nth(1)
        .ok_or("usage: skills_server DIRECTORY (each folder with a SKILL.md is a skill)")?;
    let catalog = SkillCatalog::from_dir(&root)
        .map_err(|e| format!("skills_server: cannot serve `{root}`: {e}"))?;
    let server = Skills {
        catalog: Arc::new(catalog),
    };
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
