// core/json_text.hpp: the metrics and trace files' one-line JSON layout through nlohmann-json, the
// %.9g-equivalent numbers (whole values as integers, non-finite as null), and escaping.
#include <gtest/gtest.h>

#include <cmath>

#include "core/json_text.hpp"

namespace hpct::json_text {
namespace {

TEST(JsonText, LineKeepsTheFilesLayoutAndParsesBack) {
  Json r;
  r["type"] = "summary";
  r["loss"] = number(0.69314718055994531, 9);
  r["step"] = number(100.0, 9);
  r["bad"] = number(std::nan(""), 9);
  r["args"] = Json{{"name", "a \"quoted\"\n name"}};
  const std::string text = line(r);
  EXPECT_EQ(text,
            "{\"type\": \"summary\", \"loss\": 0.693147181, \"step\": 100, \"bad\": null, "
            "\"args\": {\"name\": \"a \\\"quoted\\\"\\n name\"}}");
  const Json back = Json::parse(text);
  EXPECT_EQ(back["args"]["name"], "a \"quoted\"\n name");
  EXPECT_DOUBLE_EQ(back["loss"].get<double>(), 0.693147181);
}

TEST(JsonText, NumbersShowThePrintfDigits) {
  for (const double v : {0.693147182, 1.5e-05, 0.0001234, 3e-07, 2.5e20, 0.1, -42.125})
    EXPECT_EQ(number(v, 9).dump(), strf("%.9g", v)) << v;
  EXPECT_EQ(number(1.0 / 3.0).dump(), "0.3333333333333333");  // 17 digits: shortest exact form
  EXPECT_EQ(fixed(0.0684999, 3).dump(), "0.068");
  EXPECT_EQ(fixed(32.84, 1).dump(), "32.8");
  EXPECT_TRUE(number(INFINITY).is_null());
}

}  // namespace
}  // namespace hpct::json_text
