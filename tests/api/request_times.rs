//! The request counter times DynamoDB calls as well as counting them: the bench splits
//! its slowest lucky dips into time in calls and time in the process.

use std::time::Duration;

use tally::store::RequestCounter;
use tally_domain::ids::DrawId;

use crate::helpers::fresh_store;

#[tokio::test]
async fn the_counter_times_each_call_and_its_time_in_flight() {
    let counter = RequestCounter::default();
    let (store, _table) = fresh_store(Some(counter.clone())).await;
    let (requests, before) = (counter.get(), counter.times());
    let missing = DrawId::parse("missing").expect("valid id");
    assert!(store.get_draw(&missing).await.expect("read").is_none());
    let times = counter.times().since(&before);
    assert_eq!(counter.get() - requests, 1);
    assert!(times.in_flight > Duration::ZERO);
    assert!(times.in_calls >= times.in_flight);
    // A clone of the counter shares the times.
    let clone = counter.clone();
    assert_eq!(clone.times().in_calls, counter.times().in_calls);
}
