// The model file through nlohmann-json: exact round trip (float32 thresholds with 9 digits, doubles
// in shortest round-trip form, NaN leaves), the documented key order, and errors that name the file,
// line and field.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "gbdt/model_io.hpp"

namespace hpct::gbdt {
namespace {

Model small_model() {
  Model m;
  m.objective = Objective::binary;
  m.num_features = 3;
  m.base_margin = {-0.1234567890123456789};
  Tree t;
  for (int i = 0; i < 3; ++i) t.add_node(0, 0.1 * (i + 1), 5 + i);
  t.feature[0] = 2, t.threshold[0] = 0.1f, t.default_left[0] = 1, t.left[0] = 1, t.right[0] = 2;
  t.value[1] = 1.0 / 3.0, t.value[2] = -2e-300, t.gain[0] = 12.5;
  m.trees.push_back(t);
  m.tree_output.push_back(0);
  t.threshold[0] = FLT_MAX, t.value[1] = std::nan("");
  m.trees.push_back(t);
  m.tree_output.push_back(0);
  return m;
}

std::string error_of(const std::string& text) {
  try {
    from_json(text, "m.json");
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ModelIo, RoundTripsExactlyInTheDocumentedOrder) {
  const Model m = small_model();
  const std::string text = to_json(m);
  const Model back = from_json(text, "roundtrip");
  EXPECT_EQ(to_json(back), text);
  ASSERT_EQ(back.trees.size(), 2u);
  EXPECT_EQ(back.base_margin[0], m.base_margin[0]);
  EXPECT_EQ(back.trees[0].threshold[0], 0.1f);
  EXPECT_EQ(back.trees[1].threshold[0], FLT_MAX);
  EXPECT_EQ(back.trees[0].value[1], 1.0 / 3.0);
  EXPECT_EQ(back.trees[0].value[2], -2e-300);
  EXPECT_TRUE(std::isnan(back.trees[1].value[1]));  // written as null
  EXPECT_NE(text.find("\"threshold\": [0.100000001,"), std::string::npos) << text;
  const auto j = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  for (const auto& kv : j.items()) keys.push_back(kv.key());
  EXPECT_EQ(keys,
            (std::vector<std::string>{"format", "version", "objective", "num_class", "num_features", "num_outputs",
                                      "rounds", "split_rule", "prediction", "base_margin", "trees"}));
}

TEST(ModelIo, ErrorsNameTheFileLineAndField) {
  EXPECT_NE(error_of("{\n  \"format\": \"hpctrain-gbdt\",\n  oops\n}").find("m.json:3: model file: parse error"),
            std::string::npos)
      << error_of("{\n  \"format\": \"hpctrain-gbdt\",\n  oops\n}");
  EXPECT_NE(error_of("{\"format\": \"other\"}").find("not an hpctrain-gbdt model file"), std::string::npos);
  std::string text = to_json(small_model());
  const std::size_t p = text.find("\"num_features\"");
  const std::string renamed = text.substr(0, p) + "\"num_feat\"" + text.substr(p + 14);
  EXPECT_NE(error_of(renamed).find("m.json: num_features: model file lacks"), std::string::npos);
  text = to_json(small_model());
  const std::size_t q = text.find("\"left\": [1");
  EXPECT_NE(
      error_of(text.replace(q, 10, "\"left\": [\"a\"")).find("m.json: left: model file: 'left' holds a value"),
      std::string::npos);
}

// Text labels' class names (Note [text labels]): kept after num_features, read back; a file without
// them (older ones, numeric labels) has none; a regression model or too many names are refused.
TEST(ModelIo, ClassNamesRoundTrip) {
  Model m = small_model();
  m.classes = {"no", "yes, surely"};
  const std::string text = to_json(m);
  EXPECT_NE(text.find("\"classes\": [\"no\",\"yes, surely\"],\n  \"num_outputs\""), std::string::npos) << text;
  EXPECT_EQ(from_json(text, "m.json").classes, m.classes);
  EXPECT_TRUE(from_json(to_json(small_model()), "m.json").classes.empty());
  m.classes.push_back("maybe");
  EXPECT_NE(error_of(to_json(m)).find("m.json: classes: model file: 'classes' must hold at most num_class names"),
            std::string::npos);
  m.classes.pop_back();
  m.objective = Objective::regression;
  EXPECT_NE(error_of(to_json(m)).find("m.json: classes:"), std::string::npos);
}

}  // namespace
}  // namespace hpct::gbdt
