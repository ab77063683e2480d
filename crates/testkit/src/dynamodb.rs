//! DynamoDB Local as the tests reach it: its endpoint (or one line saying how to start
//! it), a client, tables of a test's own that are deleted when their guard drops, and the
//! items read back.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Once;

use aws_config::{BehaviorVersion, Region};
use aws_sdk_dynamodb::Client;
use aws_sdk_dynamodb::config::Credentials;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType,
    ScalarAttributeType,
};
use rand::distr::{Alphanumeric, SampleString};

/// A table item as a map of attribute values.
pub type Item = HashMap<String, AttributeValue>;

/// The URL of the DynamoDB Local that `scripts/with-dynamodb.sh` started. Without one,
/// the whole test process stops with one line saying how to run it, rather than every
/// test failing on its own.
pub fn endpoint() -> String {
    match std::env::var("DYNAMODB_ENDPOINT") {
        Ok(endpoint) if !endpoint.is_empty() => endpoint,
        _ => not_started(),
    }
}

fn not_started() -> ! {
    static SAID: Once = Once::new();
    // One test says it and ends the process; the others wait here until it has.
    SAID.call_once(|| {
        // Written to the process's stderr itself: the test harness would hold back a
        // test's own output, and the process ends before it is shown.
        let _ = writeln!(
            std::io::stderr(),
            "DYNAMODB_ENDPOINT is not set: these tests need DynamoDB Local, run them with \
             `scripts/with-dynamodb.sh cargo test --workspace` or `make test`"
        );
        std::process::exit(1);
    });
    unreachable!("the process has ended")
}

/// A client of DynamoDB Local, with the dummy credentials it takes.
pub async fn client() -> Client {
    let config = aws_config::defaults(BehaviorVersion::latest())
        .endpoint_url(endpoint())
        .region(Region::new("us-east-1"))
        .credentials_provider(Credentials::new("local", "local", None, None, "testkit"))
        .load()
        .await;
    Client::new(&config)
}

/// A table of one test's own: the guard holds its name and deletes the table when it
/// drops, at the end of the test whether it passed or failed, so that DynamoDB Local does
/// not carry every earlier test's items through the run.
#[derive(Debug)]
pub struct TestTable {
    name: String,
}

impl TestTable {
    /// A name no other test uses; whoever first needs the table creates it.
    pub fn reserve() -> Self {
        Self {
            name: format!(
                "tally-test-{}",
                Alphanumeric.sample_string(&mut rand::rng(), 16)
            ),
        }
    }

    /// A new table keyed by the string `pk` alone, and a client of it.
    pub async fn keyed_by_pk() -> (Client, Self) {
        let table = Self::reserve();
        let client = client().await;
        client
            .create_table()
            .table_name(table.name())
            .billing_mode(BillingMode::PayPerRequest)
            .attribute_definitions(
                AttributeDefinition::builder()
                    .attribute_name("pk")
                    .attribute_type(ScalarAttributeType::S)
                    .build()
                    .expect("a whole definition"),
            )
            .key_schema(
                KeySchemaElement::builder()
                    .attribute_name("pk")
                    .key_type(KeyType::Hash)
                    .build()
                    .expect("a whole key"),
            )
            .send()
            .await
            .expect("create the test table");
        (client, table)
    }

    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for TestTable {
    /// Deletes the table on a runtime of its own: a drop cannot await, and the test's
    /// runtime may be a single thread that this blocks. A table never created is no error.
    fn drop(&mut self) {
        let name = self.name.clone();
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                let _ = client().await.delete_table().table_name(name).send().await;
            });
        })
        .join();
    }
}

/// Every item of `table`, read back with strongly consistent scans.
pub async fn scan(client: &Client, table: &str) -> Vec<Item> {
    let mut items = Vec::new();
    let mut start: Option<Item> = None;
    loop {
        let output = client
            .scan()
            .table_name(table)
            .consistent_read(true)
            .set_exclusive_start_key(start)
            .send()
            .await
            .expect("scan the table");
        items.extend(output.items().iter().cloned());
        match output.last_evaluated_key() {
            Some(key) if !key.is_empty() => start = Some(key.clone()),
            _ => return items,
        }
    }
}

/// The item of `table` whose `pk` is `key`, read strongly consistent.
pub async fn item(client: &Client, table: &str, key: &str) -> Option<Item> {
    client
        .get_item()
        .table_name(table)
        .key("pk", AttributeValue::S(key.to_owned()))
        .consistent_read(true)
        .send()
        .await
        .expect("read the item")
        .item
}

/// Items of one kind (`draw`, `purchase`, `ticket`, ...).
pub fn of_kind<'a>(items: &'a [Item], kind: &str) -> Vec<&'a Item> {
    items
        .iter()
        .filter(|i| matches!(i.get("kind"), Some(AttributeValue::S(k)) if k == kind))
        .collect()
}

pub fn attr_s<'a>(item: &'a Item, name: &str) -> &'a str {
    match item.get(name) {
        Some(AttributeValue::S(s)) => s,
        other => panic!("{name} is not a string: {other:?}"),
    }
}

pub fn attr_n(item: &Item, name: &str) -> u64 {
    match item.get(name) {
        Some(AttributeValue::N(n)) => n.parse().unwrap(),
        other => panic!("{name} is not a number: {other:?}"),
    }
}

pub fn attr_numbers(item: &Item, name: &str) -> Vec<u64> {
    match item.get(name) {
        Some(AttributeValue::L(list)) => list
            .iter()
            .map(|v| match v {
                AttributeValue::N(n) => n.parse().unwrap(),
                other => panic!("not a number: {other:?}"),
            })
            .collect(),
        other => panic!("{name} is not a list: {other:?}"),
    }
}

/// The binary attribute `name` of `item` (a draw's `seed`, its `perm_key`).
pub fn attr_b(item: &Item, name: &str) -> Vec<u8> {
    match item.get(name) {
        Some(AttributeValue::B(blob)) => blob.as_ref().to_vec(),
        other => panic!("no {name}: {other:?}"),
    }
}
