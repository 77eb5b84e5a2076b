//! Search over real catalogs (__test__/fixtures/catalogs, captured from the servers' packages):
//! requests and descriptions in Chinese and Japanese, and the same tool on two servers.

use super::*;
use crate::catalog::{build_server_tools, ToolPrefix};
use serde_json::Value;
use std::sync::Arc;

fn catalogs(servers: &[&str]) -> (Vec<ToolInfo>, SearchIndex) {
    let mut tools = Vec::new();
    for server in servers {
        let path = format!(
            "{}/../../__test__/fixtures/catalogs/{server}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        let catalog: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let listed = |key: &str| catalog[key].as_array().cloned().unwrap_or_default();
        let defined: Vec<Arc<Value>> = listed("tools").into_iter().map(Arc::new).collect();
        tools.extend(build_server_tools(
            server,
            ToolPrefix::Server,
            &defined,
            &listed("resources"),
            &[],
            true,
        ));
    }
    let index = SearchIndex::build(&tools, &[]);
    (tools, index)
}

fn top(tools: &[ToolInfo], index: &SearchIndex, query: &str, n: usize) -> Vec<String> {
    let opts = SearchOptions {
        limit: n,
        ..Default::default()
    };
    let page = search(tools, index, query, &opts).unwrap();
    page.hits.iter().map(|h| h.tool.name.clone()).collect()
}

/// The catalogs the tests search: maps, chat and accounting described in Chinese and Japanese
/// beside English ones that do the same.
const SERVERS: &[&str] = &[
    "amap",
    "baidu-map",
    "lark",
    "chatwork",
    "freee",
    "google-maps",
    "weather",
    "slack",
    "github",
];

#[test]
fn chinese_requests_find_tools_described_in_chinese() {
    let (tools, index) = catalogs(SERVERS);
    let first = |query| top(&tools, &index, query, 1)[0].clone();
    assert_eq!(first("把详细地址转换成经纬度坐标"), "amap_maps_geo");
    assert_eq!(first("测量两个坐标之间的距离"), "amap_maps_distance");
    let message = top(&tools, &index, "给群聊发送一条消息", 3);
    assert!(
        message.contains(&"lark_im_v1_message_create".to_string()),
        "{message:?}"
    );
    let weather = top(&tools, &index, "查询明天上海的天气预报", 2);
    assert!(
        weather.contains(&"amap_maps_weather".to_string())
            && weather.contains(&"baidu-map_map_weather".to_string()),
        "{weather:?}"
    );
}

#[test]
fn japanese_requests_find_tools_described_in_japanese() {
    let (tools, index) = catalogs(SERVERS);
    let first = |query| top(&tools, &index, query, 1)[0].clone();
    assert_eq!(
        first("チャットに新しいメッセージを投稿して"),
        "chatwork_post_room_message"
    );
    assert_eq!(first("タスクを追加"), "chatwork_create_room_task");
    assert_eq!(first("事業所一覧"), "freee_list_companies");
}

#[test]
fn a_request_in_another_script_finds_tools_by_their_names() {
    let (tools, index) = catalogs(SERVERS);
    let first = |query| top(&tools, &index, query, 1)[0].clone();
    assert_eq!(first("bicycling route"), "amap_maps_bicycling");
    assert_eq!(first("walking directions"), "amap_maps_direction_walking");
    assert_eq!(
        first("weather in Shanghai"),
        "amap_maps_weather",
        "the name of a tool described in Chinese counts more for an English request"
    );
    let ip = top(&tools, &index, "ip location", 2);
    assert_eq!(ip, ["amap_maps_ip_location", "baidu-map_map_ip_location"]);
    let issue = top(&tools, &index, "用 GitHub 创建 issue", 5);
    assert!(
        issue.contains(&"github_create_issue".to_string()),
        "the English words of a Chinese request: {issue:?}"
    );
}

#[test]
fn the_same_tool_on_two_servers_is_one_hit() {
    let (tools, index) = catalogs(&["filesystem", "desktop-commander", "github", "gitlab"]);
    let opts = SearchOptions {
        limit: 5,
        ..Default::default()
    };
    let page = search(&tools, &index, "create directory", &opts).unwrap();
    let first = &page.hits[0];
    let twins: Vec<&str> = first.also.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        (first.tool.name.as_str(), twins),
        (
            "filesystem_create_directory",
            vec!["desktop-commander_create_directory"]
        ),
        "same name, arguments and close descriptions"
    );
    assert!(page.hits[1..]
        .iter()
        .all(|h| !h.tool.name.ends_with("create_directory")));
    let page = search(&tools, &index, "list a directory", &opts).unwrap();
    let listings = page
        .hits
        .iter()
        .filter(|h| h.tool.original == "list_directory")
        .count();
    assert_eq!(
        listings, 2,
        "desktop-commander's takes a depth: another tool"
    );
    let page = search(&tools, &index, "create_issue", &opts).unwrap();
    let issues: Vec<&str> = page.hits[..2]
        .iter()
        .map(|h| h.tool.name.as_str())
        .collect();
    assert!(
        issues.contains(&"github_create_issue") && issues.contains(&"gitlab_create_issue"),
        "GitHub's and GitLab's take other arguments: {issues:?}"
    );
    let scoped = SearchOptions {
        server: Some("desktop-commander".into()),
        ..opts
    };
    let page = search(&tools, &index, "create directory", &scoped).unwrap();
    assert_eq!(page.hits[0].tool.name, "desktop-commander_create_directory");
    assert!(
        page.hits[0].also.is_empty(),
        "a twin out of scope is not named"
    );
}

#[test]
fn a_task_s_first_hits_cover_its_needs() {
    let (tools, index) = catalogs(&["vercel", "linear", "slack", "github", "circleci", "sentry"]);
    let task = "Last night's deploy of checkout-api to prod failed on Vercel. Pull the build log, \
                open a Linear issue in the Payments team with the relevant error lines, and post \
                the link in #deploys on Slack.";
    let first = top(&tools, &index, task, 5);
    for needed in ["vercel_getDeploymentEvents", "slack_post_message"] {
        assert!(first.contains(&needed.to_string()), "{needed}: {first:?}");
    }
    assert!(
        first.iter().any(|t| t.starts_with("linear_create")),
        "{first:?}"
    );
    let linear = first.iter().filter(|t| t.starts_with("linear_")).count();
    assert!(
        linear <= 2,
        "one need does not crowd out the others: {first:?}"
    );
}

#[test]
fn chinese_and_japanese_requests_find_tools_described_in_english() {
    let (tools, index) = catalogs(&[
        "chart",
        "gmail",
        "google-calendar",
        "slack",
        "github",
        "amap",
    ]);
    let first = |query| top(&tools, &index, query, 3);
    assert!(first("按区统计门店数量，画一个饼图").contains(&"chart_generate_pie_chart".to_string()));
    assert!(first("给财务同事发封邮件").contains(&"gmail_send_email".to_string()));
    assert!(first("在 Google 日历上建个日程").contains(&"google-calendar_create-event".to_string()));
    assert!(first("カテゴリ別の件数を円グラフにしてください")
        .contains(&"chart_generate_pie_chart".to_string()));
}

#[test]
fn a_task_is_weak_when_its_hits_hold_little_of_its_needs() {
    let (tools, index) = catalogs(&["vercel", "linear", "slack", "weather"]);
    let opts = SearchOptions {
        limit: 12,
        ..Default::default()
    };
    let strong =
        "Pull the build log of the failed Vercel deployment, open a Linear issue with it, \
                  and post the issue in #deploys on Slack.";
    assert!(search(&tools, &index, strong, &opts)
        .unwrap()
        .weak
        .is_none());
    let weak = "Book a table for four at the ramen place near the station, then order flowers for \
                my mother's birthday and renew my passport.";
    assert!(search(&tools, &index, weak, &opts).unwrap().weak.is_some());
}

#[test]
fn a_task_that_names_a_server_gets_that_servers_tools() {
    // Grafana queries Prometheus too; the request says which server it means.
    let (tools, index) = catalogs(&["prometheus", "grafana", "kubernetes"]);
    let first = top(
        &tools,
        &index,
        "Query Prometheus for the checkout error rate over the last hour, then restart the \
         checkout pods in the cluster.",
        5,
    );
    assert!(first[0].starts_with("prometheus_"), "{first:?}");
}
