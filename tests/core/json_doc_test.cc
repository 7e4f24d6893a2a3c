#include <doctest/doctest.h>

#include <string>

#include "core/plan/json_doc.h"

using planck::core::JsonDoc;
using planck::core::JsonParseError;

TEST_CASE("core_json positions of values and keys are 1-based line/column in bytes") {
  const std::string text = "{\n  \"a\": [1, 2,\n        3],\n  \"b~/c\": {\"x\": true}\n}";
  JsonParseError err;
  auto doc = JsonDoc::parse(text, &err);
  REQUIRE(doc);
  CHECK(doc->position("").line == 1);
  CHECK(doc->position("/a").line == 2);
  CHECK(doc->position("/a").column == 8);
  CHECK(doc->position("/a/2").line == 3);
  CHECK(doc->position("/a/2").column == 9);
  CHECK(doc->key_position("/a").column == 3);
  // RFC 6901 escaping of '~' and '/'.
  CHECK(doc->position("/b~0~1c/x").line == 4);
  CHECK(doc->position("/b~0~1c/x").column == 17);
  // Unknown pointers fall back to the nearest ancestor.
  CHECK(doc->position("/a/9").line == 2);
  CHECK(doc->root()["a"][2] == 3);
}

TEST_CASE("core_json syntax errors carry the position of the problem") {
  struct Case {
    std::string text;
    int line, column;
    std::string words;
  };
  const Case cases[] = {
      {"", 1, 1, "empty"},
      {"{\"a\": 1,}", 1, 9, "quoted key"},
      {"{\"a\": 1\n \"b\": 2}", 2, 2, "expected ','"},
      {"[1, 2", 1, 6, "end of file"},
      {"{\"a\": tru}", 1, 7, "literal"},
      {"{\"a\": 01}", 1, 8, "leading zeros"},
      {"{\"a\": \"x\ny\"}", 1, 9, "control character"},
      {"{\"a\": 1, \"a\": 2}", 1, 10, "key 'a' appears twice in one object (first at line 1)"},
      {"{\"a\": 1} x", 1, 10, "after the end"},
      {std::string("{\"a\": \"\xff\"}"), 1, 8, "UTF-8"},
      {std::string("{\"a\": 1}\0", 9), 1, 9, "after the end"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    JsonParseError err;
    auto doc = JsonDoc::parse(c.text, &err);
    CHECK_FALSE(doc);
    CHECK(err.pos.line == c.line);
    CHECK(err.pos.column == c.column);
    CHECK(err.message.find(c.words) != std::string::npos);
  }
}

TEST_CASE("core_json a duplicate key is flagged as such, a \\u0000 escape is accepted") {
  JsonParseError err;
  CHECK_FALSE(JsonDoc::parse("{\"a\": {\"b\": 1,\n \"b\": 2}}", &err));
  CHECK(err.duplicate_key);
  CHECK(err.pos.line == 2);
  CHECK(err.message.find("key 'b' appears twice") != std::string::npos);
  CHECK_FALSE(JsonDoc::parse("{\"a\": 1,}", &err));
  CHECK_FALSE(err.duplicate_key);
  // JSONTestSuite y_string_null_escape.json (nst/JSONTestSuite): ["\u0000"] must parse.
  auto doc = JsonDoc::parse("[\"\\u0000\"]", &err);
  REQUIRE(doc);
  CHECK(doc->root()[0].get<std::string>() == std::string(1, '\0'));
}

TEST_CASE("core_json deep nesting is an error, not a stack overflow") {
  std::string deep(100000, '[');
  JsonParseError err;
  CHECK_FALSE(JsonDoc::parse(deep, &err));
  CHECK(err.message.find("nesting deeper than") != std::string::npos);
  std::string ok(JsonDoc::kMaxDepth, '[');
  ok += std::string(JsonDoc::kMaxDepth, ']');
  CHECK(JsonDoc::parse(ok, &err));
}

TEST_CASE("core_json numbers: 64-bit integers exact, larger ones become doubles, escapes decode") {
  JsonParseError err;
  auto doc = JsonDoc::parse(
      "[9223372036854775807, -9223372036854775808, 18446744073709551615, 99999999999999999999999, 1.5e3, "
      "\"\\u00e9\\ud83d\\ude00\\n\"]",
      &err);
  REQUIRE(doc);
  const auto& a = doc->root();
  CHECK(a[0].get<std::int64_t>() == INT64_MAX);
  CHECK(a[1].get<std::int64_t>() == INT64_MIN);
  CHECK(a[2].is_number_unsigned());
  CHECK(a[3].is_number_float());
  CHECK(a[4].get<double>() == 1500.0);
  CHECK(a[5].get<std::string>() == "\xc3\xa9\xf0\x9f\x98\x80\n");
}
