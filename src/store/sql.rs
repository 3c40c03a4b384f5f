//! [`TurnStore`] in SQLite or PostgreSQL, through sqlx's `Any` driver: one
//! set of statements, with the few words the two dialects spell apart
//! (the database's clock, a row lock) filled in per dialect.

use std::str::FromStr;
use std::sync::{Arc, Once};

use serde_json::Value;
use sqlx::AnyPool;
use sqlx::any::{AnyConnectOptions, AnyPoolOptions, AnyRow};
use sqlx::migrate::{Migration, MigrationType, Migrator};
use sqlx::{AssertSqlSafe, Executor, Row, SqlSafeStr};

use super::{
    BoxFuture, Checkpoint, Claimed, Decided, Decision, Lease, StoredTurn, TurnStatus, TurnStore,
    WaitEntry, WaitingCall, WaitingTurn, Worker,
};
use crate::error::{Error, ErrorKind, Result};

/// The table in which the store notes the migrations it ran (not sqlx's
/// default, so that an application's own migrations keep theirs).
const MIGRATIONS_TABLE: &str = "mcp_adapters_migrations";

/// The two databases, and what they spell apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dialect {
    Sqlite,
    Postgres,
}

impl Dialect {
    /// The database's present, in milliseconds since the Unix epoch.
    fn now(self) -> &'static str {
        match self {
            Dialect::Sqlite => "CAST(unixepoch('subsec') * 1000 AS BIGINT)",
            Dialect::Postgres => "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)",
        }
    }

    /// The elements of a JSON array of strings given as parameter `$n`.
    fn json_strings(self, n: usize) -> String {
        match self {
            Dialect::Sqlite => format!("SELECT value FROM json_each(${n})"),
            Dialect::Postgres => format!("SELECT jsonb_array_elements_text(CAST(${n} AS jsonb))"),
        }
    }

    /// What a transaction that writes starts with: SQLite takes its write
    /// lock at once, so that no reader upgrades later and fails.
    fn begin(self) -> &'static str {
        match self {
            Dialect::Sqlite => "BEGIN IMMEDIATE",
            Dialect::Postgres => "BEGIN",
        }
    }

    /// A row lock for a `SELECT` in a transaction (SQLite's write lock
    /// already holds the database).
    fn for_update(self, skip_locked: bool) -> &'static str {
        match (self, skip_locked) {
            (Dialect::Sqlite, _) => "",
            (Dialect::Postgres, false) => "FOR UPDATE",
            (Dialect::Postgres, true) => "FOR UPDATE SKIP LOCKED",
        }
    }

    fn migrations(self) -> Migrator {
        let (version, description, sql) = match self {
            Dialect::Sqlite => (1, "turns", include_str!("migrations/sqlite/0001_turns.sql")),
            Dialect::Postgres => (
                1,
                "turns",
                include_str!("migrations/postgres/0001_turns.sql"),
            ),
        };
        let mut migrator = Migrator::with_migrations(vec![Migration::new(
            version,
            description.into(),
            MigrationType::Simple,
            sql.into_sql_str(),
            false,
        )]);
        migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
        migrator
    }
}

/// The statements, written once per dialect.
#[derive(Debug)]
struct Statements {
    put: Arc<str>,
    claim_next: Arc<str>,
    claim_named: Arc<str>,
    why_not: Arc<str>,
    decisions: Arc<str>,
    renew: Arc<str>,
    forget: Arc<str>,
    keep: Arc<str>,
    release: Arc<str>,
    status_of: Arc<str>,
    record: Arc<str>,
    recount: Arc<str>,
    waiting: Arc<str>,
    waiting_decisions: Arc<str>,
    expired: Arc<str>,
    turn: Arc<str>,
}

impl Statements {
    fn new(dialect: Dialect) -> Self {
        let now = dialect.now();
        let free = format!("(lease IS NULL OR lease_until <= {now})");
        let held = format!(
            "CAST(CASE WHEN lease IS NOT NULL AND lease_until > {now} THEN 1 ELSE 0 END AS BIGINT)"
        );
        let s = |text: String| Arc::<str>::from(text);
        Statements {
            put: s(format!(
                "INSERT INTO mcp_adapters_turns \
                 (id, version, status, document, waits, undecided, worker, lease, lease_until) \
                 VALUES ($1, 1, $2, $3, $4, $5, $6, $7, {now} + $8)"
            )),
            claim_next: s(format!(
                "UPDATE mcp_adapters_turns SET worker = $1, lease = $2, lease_until = {now} + $3 \
                 WHERE seq = (SELECT seq FROM mcp_adapters_turns WHERE status <> 'done' \
                 AND {free} AND (status = 'running' OR undecided = 0) \
                 ORDER BY seq LIMIT 1 {lock}) AND {free} \
                 RETURNING id, version, status, document",
                lock = dialect.for_update(true)
            )),
            claim_named: s(format!(
                "UPDATE mcp_adapters_turns SET worker = $1, lease = $2, lease_until = {now} + $3 \
                 WHERE id = $4 AND status <> 'done' AND {free} \
                 RETURNING id, version, status, document"
            )),
            why_not: s(format!(
                "SELECT status, worker, {held} AS held FROM mcp_adapters_turns WHERE id = $1"
            )),
            decisions: s(
                "SELECT call_id, decision FROM mcp_adapters_decisions WHERE turn_id = $1".into(),
            ),
            renew: s(format!(
                "UPDATE mcp_adapters_turns SET lease_until = {now} + $1 \
                 WHERE id = $2 AND lease = $3 AND lease_until > {now}"
            )),
            forget: s(format!(
                "DELETE FROM mcp_adapters_decisions WHERE turn_id = $1 AND call_id NOT IN ({})",
                dialect.json_strings(2)
            )),
            keep: s(format!(
                "UPDATE mcp_adapters_turns SET version = version + 1, status = $1, document = $2, \
                 waits = $3, undecided = $4 - (SELECT COUNT(*) FROM mcp_adapters_decisions \
                 WHERE turn_id = $5 AND (waits_for || ' ' || call_id) IN ({})) \
                 WHERE id = $5 AND lease = $7 AND version = $8 AND lease_until > {now} \
                 RETURNING version",
                dialect.json_strings(6)
            )),
            release: s(
                "UPDATE mcp_adapters_turns SET worker = NULL, lease = NULL, lease_until = NULL \
                 WHERE id = $1 AND lease = $2"
                    .into(),
            ),
            status_of: s(format!(
                "SELECT status, waits FROM mcp_adapters_turns WHERE id = $1 {}",
                dialect.for_update(false)
            )),
            record: s(
                "INSERT INTO mcp_adapters_decisions (turn_id, call_id, waits_for, decision) \
                 VALUES ($1, $2, $3, $4) ON CONFLICT (turn_id, call_id) DO UPDATE \
                 SET waits_for = excluded.waits_for, decision = excluded.decision"
                    .into(),
            ),
            recount: s(format!(
                "UPDATE mcp_adapters_turns SET undecided = $1 - (SELECT COUNT(*) \
                 FROM mcp_adapters_decisions WHERE turn_id = $2 \
                 AND (waits_for || ' ' || call_id) IN ({})) WHERE id = $2",
                dialect.json_strings(3)
            )),
            waiting: s(format!(
                "SELECT id, status, waits, undecided, worker, {held} AS held \
                 FROM mcp_adapters_turns WHERE status <> 'done' ORDER BY seq"
            )),
            waiting_decisions: s(
                "SELECT d.turn_id, d.call_id, d.decision FROM mcp_adapters_decisions d \
                 JOIN mcp_adapters_turns t ON t.id = d.turn_id WHERE t.status <> 'done'"
                    .into(),
            ),
            expired: s(format!(
                "SELECT id FROM mcp_adapters_turns WHERE status <> 'done' \
                 AND lease IS NOT NULL AND lease_until <= {now} ORDER BY seq"
            )),
            turn: s(
                "SELECT version, status, document, waits FROM mcp_adapters_turns WHERE id = $1"
                    .into(),
            ),
        }
    }
}

/// Durable turns in SQLite or PostgreSQL, the backend chosen by the URL
/// it is opened with.
///
/// Both keep a turn as one row (the document's bytes, its version, its
/// status, what it waits for, its lease) and each decision recorded as a
/// row of its own; the tables are created, and migrated by later versions
/// of the library, when the store is opened (the migrations noted in
/// `mcp_adapters_migrations`). A lease's end is a time of the database's
/// clock, compared with the database's present.
///
/// SQLite serves the workers of one machine (the file in write-ahead-log
/// mode, each write taking the lock at once); PostgreSQL serves a fleet
/// (a worker looking for a ready turn skips the rows another is claiming).
#[derive(Debug, Clone)]
pub struct SqlStore {
    pool: AnyPool,
    dialect: Dialect,
    sql: Arc<Statements>,
}

/// The failure of a statement, as an error of the store.
fn failed(what: &str) -> impl FnOnce(sqlx::Error) -> Error + '_ {
    move |e| Error::new(ErrorKind::Store, format!("the turn store could not {what}")).with_source(e)
}

fn q(sql: &Arc<str>) -> sqlx::query::Query<'static, sqlx::Any, sqlx::any::AnyArguments> {
    sqlx::query(AssertSqlSafe(sql.clone()))
}

fn lost(turn: &str, why: &str) -> Error {
    Error::new(
        ErrorKind::LeaseLost,
        format!(
            "this worker's lease on turn `{}` is lost ({why}): it keeps no more of the turn, and sends nothing more for it",
            crate::describe::escape_visible(turn)
        ),
    )
}

fn no_turn(turn: &str) -> Error {
    Error::new(
        ErrorKind::Input,
        format!(
            "the store has no turn `{}`",
            crate::describe::escape_visible(turn)
        ),
    )
}

impl SqlStore {
    /// Opens the store behind `url` (`sqlite:PATH`, `sqlite::memory:`,
    /// `postgres://...`) and creates or migrates its tables. A SQLite file
    /// is created when it does not exist.
    ///
    /// # Errors
    ///
    /// [`ErrorKind::Input`] for a URL of another scheme, or of a backend
    /// this build leaves out (features `sqlite`, `postgres`);
    /// [`ErrorKind::Store`] when the database cannot be reached or migrated.
    pub async fn open(url: &str) -> Result<Self> {
        static DRIVERS: Once = Once::new();
        DRIVERS.call_once(|| {
            // An application that installed its own drivers first keeps them.
            let _ = sqlx::any::install_drivers(&[
                #[cfg(feature = "postgres")]
                sqlx::postgres::any::DRIVER,
                #[cfg(feature = "sqlite")]
                sqlx::sqlite::any::DRIVER,
            ]);
        });
        let shown = crate::describe::escape_visible(url);
        let (dialect, url) = if url.starts_with("sqlite:") {
            if !cfg!(feature = "sqlite") {
                return Err(Error::input(format!(
                    "`{shown}` names a SQLite store, and this build leaves SQLite out (feature `sqlite`)"
                )));
            }
            let memory = url.contains(":memory:");
            let url = if memory || url.contains("mode=") {
                url.to_owned()
            } else if url.contains('?') {
                format!("{url}&mode=rwc")
            } else {
                format!("{url}?mode=rwc")
            };
            (Dialect::Sqlite, url)
        } else if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            if !cfg!(feature = "postgres") {
                return Err(Error::input(format!(
                    "`{shown}` names a PostgreSQL store, and this build leaves PostgreSQL out (feature `postgres`)"
                )));
            }
            (Dialect::Postgres, url.to_owned())
        } else {
            return Err(Error::input(format!(
                "`{shown}` is not a turn store's URL: give `sqlite:PATH` or `postgres://...`"
            )));
        };
        let options = AnyConnectOptions::from_str(&url).map_err(|e| {
            Error::input(format!("`{shown}` is not a turn store's URL")).with_source(e)
        })?;
        let memory = url.contains(":memory:");
        let pool_options = AnyPoolOptions::new()
            .max_connections(if memory { 1 } else { 4 })
            .after_connect(move |conn, _| {
                Box::pin(async move {
                    if dialect == Dialect::Sqlite {
                        if !memory {
                            conn.execute("PRAGMA journal_mode = WAL").await?;
                        }
                        conn.execute("PRAGMA busy_timeout = 30000").await?;
                        conn.execute("PRAGMA foreign_keys = ON").await?;
                    }
                    Ok(())
                })
            });
        // Connected by the migrations, which run first.
        let pool = pool_options.connect_lazy_with(options);
        dialect.migrations().run(&pool).await.map_err(|e| {
            Error::new(
                ErrorKind::Store,
                format!("the turn store `{shown}` cannot be opened and migrated"),
            )
            .with_source(e)
        })?;
        Ok(SqlStore {
            pool,
            dialect,
            sql: Arc::new(Statements::new(dialect)),
        })
    }

    /// Closes the store's connections.
    pub async fn close(&self) {
        self.pool.close().await;
    }

    async fn decisions_of(&self, turn: &str) -> Result<Vec<Decided>> {
        let rows = q(&self.sql.decisions)
            .bind(turn.to_owned())
            .fetch_all(&self.pool)
            .await
            .map_err(failed("read a turn's decisions"))?;
        rows.iter()
            .map(|row| {
                Ok(Decided {
                    call: get(row, "call_id")?,
                    decision: decision_of(&get::<String>(row, "decision")?)?,
                })
            })
            .collect()
    }

    /// Why `turn` could not be claimed.
    async fn why_not(&self, turn: &str) -> Error {
        let row = match q(&self.sql.why_not)
            .bind(turn.to_owned())
            .fetch_optional(&self.pool)
            .await
        {
            Ok(Some(row)) => row,
            Ok(None) => return no_turn(turn),
            Err(e) => return failed("read a turn")(e),
        };
        let shown = crate::describe::escape_visible(turn);
        let status = get::<String>(&row, "status").unwrap_or_default();
        if status == "done" {
            return Error::input(format!(
                "turn `{shown}` has ended: no worker takes it up again"
            ));
        }
        let worker = get::<Option<String>>(&row, "worker").ok().flatten();
        Error::new(
            ErrorKind::Held,
            format!(
                "turn `{shown}` is held by worker `{}`: it goes on there, and no other worker may resume it until that worker releases it or its lease runs out",
                crate::describe::escape_visible(worker.as_deref().unwrap_or("?"))
            ),
        )
    }

    async fn claim_turn(&self, worker: &Worker, turn: Option<&str>) -> Result<Option<Claimed>> {
        let mut lease = Lease::new(String::new(), worker, 0);
        let query = match turn {
            Some(turn) => q(&self.sql.claim_named)
                .bind(worker.name().to_owned())
                .bind(lease.token().to_owned())
                .bind(lease.length_ms())
                .bind(turn.to_owned()),
            None => q(&self.sql.claim_next)
                .bind(worker.name().to_owned())
                .bind(lease.token().to_owned())
                .bind(lease.length_ms()),
        };
        let row = query
            .fetch_optional(&self.pool)
            .await
            .map_err(failed("claim a turn"))?;
        let Some(row) = row else {
            return match turn {
                Some(turn) => Err(self.why_not(turn).await),
                None => Ok(None),
            };
        };
        lease.turn = get(&row, "id")?;
        lease.set_version(get(&row, "version")?);
        let decisions = self.decisions_of(&lease.turn).await?;
        Ok(Some(Claimed {
            document: get(&row, "document")?,
            status: TurnStatus::parse(&get::<String>(&row, "status")?)?,
            lease,
            decisions,
        }))
    }

    async fn keep_turn(&self, lease: &Lease, turn: &Checkpoint) -> Result<()> {
        let needed = needed(&turn.waits);
        // A decision stays while its call waits, for whatever: a call
        // waiting for the resumption alone still needs its approval.
        let calls: Vec<&str> = turn.waits.iter().map(|w| w.call.as_str()).collect();
        let waits = to_text(&turn.waits)?;
        let mut tx = self
            .pool
            .begin_with(self.dialect.begin())
            .await
            .map_err(failed("begin a checkpoint"))?;
        q(&self.sql.forget)
            .bind(lease.turn().to_owned())
            .bind(to_text(&calls)?)
            .execute(&mut *tx)
            .await
            .map_err(failed("keep a checkpoint"))?;
        let row = q(&self.sql.keep)
            .bind(turn.status.as_str())
            .bind(turn.document.clone())
            .bind(waits)
            .bind(count(needed.len()))
            .bind(lease.turn().to_owned())
            .bind(to_text(&needed)?)
            .bind(lease.token().to_owned())
            .bind(lease.version())
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed("keep a checkpoint"))?;
        let Some(row) = row else {
            let _ = tx.rollback().await;
            return Err(lost(
                lease.turn(),
                "it ran out, or another worker took the turn over",
            ));
        };
        tx.commit().await.map_err(failed("keep a checkpoint"))?;
        lease.set_version(get(&row, "version")?);
        Ok(())
    }

    async fn decide_call(&self, turn: &str, call: &str, decision: &Decision) -> Result<()> {
        let shown = crate::describe::escape_visible;
        let mut tx = self
            .pool
            .begin_with(self.dialect.begin())
            .await
            .map_err(failed("begin recording a decision"))?;
        let row = q(&self.sql.status_of)
            .bind(turn.to_owned())
            .fetch_optional(&mut *tx)
            .await
            .map_err(failed("read a turn"))?
            .ok_or_else(|| no_turn(turn))?;
        if get::<String>(&row, "status")? == "done" {
            return Err(Error::input(format!(
                "turn `{}` has ended: there is nothing to decide",
                shown(turn)
            )));
        }
        let waits: Vec<WaitEntry> = from_text(&get::<String>(&row, "waits")?)?;
        let Some(wait) = waits.iter().find(|w| w.call == call && w.needs_decision) else {
            let waiting: Vec<String> = waits
                .iter()
                .filter(|w| w.needs_decision)
                .map(|w| format!("{} ({})", shown(&w.call), w.waits_for))
                .collect();
            return Err(Error::input(format!(
                "turn `{}` has no call `{}` waiting for a decision; it waits on: {}",
                shown(turn),
                shown(call),
                if waiting.is_empty() {
                    "nothing that needs one".to_owned()
                } else {
                    waiting.join(", ")
                }
            )));
        };
        if !wait.takes(decision) {
            return Err(Error::input(format!(
                "call `{}` of turn `{}` waits for {}, which this decision does not give",
                shown(call),
                shown(turn),
                if wait.waits_for == "input" {
                    "answers to its tool's questions"
                } else {
                    "an approval or a denial"
                }
            )));
        }
        q(&self.sql.record)
            .bind(turn.to_owned())
            .bind(call.to_owned())
            .bind(wait.waits_for.clone())
            .bind(to_text(decision)?)
            .execute(&mut *tx)
            .await
            .map_err(failed("record a decision"))?;
        let needed = needed(&waits);
        q(&self.sql.recount)
            .bind(count(needed.len()))
            .bind(turn.to_owned())
            .bind(to_text(&needed)?)
            .execute(&mut *tx)
            .await
            .map_err(failed("record a decision"))?;
        tx.commit().await.map_err(failed("record a decision"))
    }

    async fn waiting_turns(&self) -> Result<Vec<WaitingTurn>> {
        let rows = q(&self.sql.waiting)
            .fetch_all(&self.pool)
            .await
            .map_err(failed("list the waiting turns"))?;
        let decided = q(&self.sql.waiting_decisions)
            .fetch_all(&self.pool)
            .await
            .map_err(failed("list the waiting turns"))?;
        let mut decisions: std::collections::HashMap<(String, String), Decision> =
            std::collections::HashMap::new();
        for row in &decided {
            decisions.insert(
                (get(row, "turn_id")?, get(row, "call_id")?),
                decision_of(&get::<String>(row, "decision")?)?,
            );
        }
        rows.iter()
            .map(|row| {
                let turn: String = get(row, "id")?;
                let status = TurnStatus::parse(&get::<String>(row, "status")?)?;
                let held = get::<i64>(row, "held")? != 0;
                let undecided: i64 = get(row, "undecided")?;
                let waits: Vec<WaitEntry> = from_text(&get::<String>(row, "waits")?)?;
                let waits = waits
                    .into_iter()
                    .map(|wait| WaitingCall {
                        decided: decisions.remove(&(turn.clone(), wait.call.clone())),
                        wait,
                    })
                    .collect();
                Ok(WaitingTurn {
                    ready: !held && (status == TurnStatus::Running || undecided == 0),
                    worker: if held { get(row, "worker")? } else { None },
                    turn,
                    status,
                    waits,
                })
            })
            .collect()
    }
}

fn get<'r, T>(row: &'r AnyRow, column: &str) -> Result<T>
where
    T: sqlx::Decode<'r, sqlx::Any> + sqlx::Type<sqlx::Any>,
{
    row.try_get(column)
        .map_err(failed("read a column of a stored turn"))
}

/// The waits that need a decision, as `{waits_for} {call}`: a decision
/// counts for one only if it is of its kind.
fn needed(waits: &[WaitEntry]) -> Vec<String> {
    waits
        .iter()
        .filter(|w| w.needs_decision)
        .map(|w| format!("{} {}", w.waits_for, w.call))
        .collect()
}

fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_text<T: serde::Serialize + ?Sized>(value: &T) -> Result<String> {
    serde_json::to_string(value).map_err(|e| {
        Error::new(ErrorKind::Store, "a turn's columns cannot be written").with_source(e)
    })
}

fn from_text<T: serde::de::DeserializeOwned>(text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| {
        Error::new(ErrorKind::Store, "a stored turn's columns do not read").with_source(e)
    })
}

fn decision_of(text: &str) -> Result<Decision> {
    from_text::<Value>(text).and_then(|v| {
        serde_json::from_value(v).map_err(|e| {
            Error::new(ErrorKind::Store, "a stored decision does not read").with_source(e)
        })
    })
}

impl TurnStore for SqlStore {
    fn put<'a>(&'a self, worker: &'a Worker, turn: &'a Checkpoint) -> BoxFuture<'a, Result<Lease>> {
        Box::pin(async move {
            let lease = Lease::new(uuid::Uuid::new_v4().to_string(), worker, 1);
            let needed = turn.waits.iter().filter(|w| w.needs_decision).count();
            q(&self.sql.put)
                .bind(lease.turn().to_owned())
                .bind(turn.status.as_str())
                .bind(turn.document.clone())
                .bind(to_text(&turn.waits)?)
                .bind(count(needed))
                .bind(worker.name().to_owned())
                .bind(lease.token().to_owned())
                .bind(lease.length_ms())
                .execute(&self.pool)
                .await
                .map_err(failed("put a turn"))?;
            Ok(lease)
        })
    }

    fn claim<'a>(
        &'a self,
        worker: &'a Worker,
        turn: Option<&'a str>,
    ) -> BoxFuture<'a, Result<Option<Claimed>>> {
        Box::pin(self.claim_turn(worker, turn))
    }

    fn renew<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let done = q(&self.sql.renew)
                .bind(lease.length_ms())
                .bind(lease.turn().to_owned())
                .bind(lease.token().to_owned())
                .execute(&self.pool)
                .await
                .map_err(failed("renew a lease"))?;
            if done.rows_affected() == 0 {
                return Err(lost(
                    lease.turn(),
                    "it ran out, or another worker took the turn over",
                ));
            }
            Ok(())
        })
    }

    fn keep<'a>(&'a self, lease: &'a Lease, turn: &'a Checkpoint) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.keep_turn(lease, turn))
    }

    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            let done = q(&self.sql.release)
                .bind(lease.turn().to_owned())
                .bind(lease.token().to_owned())
                .execute(&self.pool)
                .await
                .map_err(failed("release a turn"))?;
            if done.rows_affected() == 0 {
                return Err(lost(lease.turn(), "another worker took the turn over"));
            }
            Ok(())
        })
    }

    fn waiting(&self) -> BoxFuture<'_, Result<Vec<WaitingTurn>>> {
        Box::pin(self.waiting_turns())
    }

    fn decide<'a>(
        &'a self,
        turn: &'a str,
        call: &'a str,
        decision: &'a Decision,
    ) -> BoxFuture<'a, Result<()>> {
        Box::pin(self.decide_call(turn, call, decision))
    }

    fn expired(&self) -> BoxFuture<'_, Result<Vec<String>>> {
        Box::pin(async move {
            let rows = q(&self.sql.expired)
                .fetch_all(&self.pool)
                .await
                .map_err(failed("list the expired leases"))?;
            rows.iter().map(|row| get(row, "id")).collect()
        })
    }

    fn turn<'a>(&'a self, turn: &'a str) -> BoxFuture<'a, Result<Option<StoredTurn>>> {
        Box::pin(async move {
            let row = q(&self.sql.turn)
                .bind(turn.to_owned())
                .fetch_optional(&self.pool)
                .await
                .map_err(failed("read a turn"))?;
            row.map(|row| {
                Ok(StoredTurn {
                    version: get(&row, "version")?,
                    status: TurnStatus::parse(&get::<String>(&row, "status")?)?,
                    document: get(&row, "document")?,
                    waits: from_text(&get::<String>(&row, "waits")?)?,
                })
            })
            .transpose()
        })
    }
}
