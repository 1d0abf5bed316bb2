// The model registry: every family is a deck choice with its own keys, builds from a deck, and a
// weights file written by training rebuilds the same model (load_model) for the tools.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/log.hpp"
#include "core/real_text.hpp"
#include "models/cape/cape_model.hpp"
#include "models/registry.hpp"
#include "nn/conv.hpp"
#include "nn/weights_io.hpp"
#include "support/test_support.hpp"

using namespace hpct;

TEST(Registry, FamiliesAreDeckChoicesWithTheirKeys) {
  const deck::Schema schema = full_schema();
  const std::string help = schema.help();
  for (const ModelFamily& f : model_families()) {
    EXPECT_NE(help.find(f.name), std::string::npos) << f.name << " missing from the model choices";
    EXPECT_NE(find_model_family(f.name), nullptr);
  }
  EXPECT_EQ(find_model_family("gbdt"), nullptr) << "trees are not a network family";
  EXPECT_NE(help.find("hidden_sizes"), std::string::npos);
  EXPECT_NE(help.find("diffusion_hidden"), std::string::npos);
}

TEST(Registry, WeightsFilesRebuildTheSameModel) {
  for (const std::string family : {"mlp", "diffusion"}) {
    const deck::Deck deck = hpct::test::make_deck("model " + family +
                                                  "\ndata_file unused.h5\nhidden_sizes 5,4\n"
                                                  "diffusion_hidden 6\ntime_embedding_dim 4\nloss mse\n");
    const ModelBuildContext ctx{deck, 3, 2, 4, nn::Precision::fp32};
    std::unique_ptr<Model> model = make_model(ctx);
    model->store().initialize(7);
    const std::string path = hpct::test::scratch("registry_" + family + ".h5");
    nn::write_weights(path, model->store(), {{"model", model->family()}, {"config", model->config_string()}},
                      model->extra_datasets());
    std::unique_ptr<Model> loaded = load_model(path, 4);
    EXPECT_EQ(loaded->family(), family);
    EXPECT_EQ(loaded->config_string(), model->config_string());
    auto a = to_host(model->store().params()), b = to_host(loaded->store().params());
    ASSERT_EQ(a.extent(0), b.extent(0));
    for (std::size_t i = 0; i < a.extent(0); ++i) ASSERT_EQ(a(i), b(i)) << family << " parameter " << i;
  }
}

// The fields of apps/trajgen's scenes (model smart), small.
std::vector<FieldSpec> scene_fields() {
  auto ragged = [](const char* name, DType t, Shape element, std::uint64_t most) {
    FieldSpec f;
    f.name = name, f.dtype = t, f.row_shape = element, f.ragged = true, f.max_row_elements = most;
    return f;
  };
  return {ragged("agent_state", DType::f32, Shape{91, 5}, 3), ragged("agent_type", DType::i64, Shape{}, 3),
          ragged("map_polyline", DType::f32, Shape{11, 2}, 5), ragged("map_type", DType::i64, Shape{}, 5)};
}

// Note [stored configuration]: the stored line sets every key of the family's config schema (so a
// key added to the family's deck section is stored too), parses back to the same line, and a value
// the schema refuses is an error naming the key.
TEST(Registry, StoredConfigurationIsTheFamilysSchemaRoundTrip) {
  for (const ModelFamily& f : model_families()) {
    const std::string family = f.name;
    const bool images = family == "resnet";  // classifies [C, H, W] images
    const deck::Deck deck = hpct::test::make_deck("model " + family +
                                                  "\ndata_file unused.h5\nhidden_sizes 5,4\n"
                                                  "diffusion_hidden 6\ntime_embedding_dim 4\n" +
                                                  (images ? "loss cross_entropy\nnum_classes 3\nresnet_width 2\n"
                                                          : "loss mse\n"));
    // Families that read other fields than tabular inputs and targets get theirs.
    std::vector<FieldSpec> fields = supervised_fields(3, 2);
    if (images)
      fields = {FieldSpec{Batch::kInputs, DType::f32, Shape{1, 8, 8}},
                FieldSpec{Batch::kTargets, DType::i64, Shape{}}};
    if (family == "gnn") {  // the netcdf source's gridded fields (a 6 x 8 grid, 2 state variables)
      const auto spec = [](const char* name, Shape shape) {
        FieldSpec s;
        s.name = name, s.row_shape = shape;
        return s;
      };
      fields = {spec("state", {2, 2, 48}), spec("targets", {2, 1, 48}), spec("diff", {2, 48}),
                spec("grid", {2, 6, 8})};
    }
    if (family == "smart") fields = scene_fields();
    if (family == "cape")  // apps/posegen's fields: 2 views of 3x16x16, 4 keypoints
      fields = {FieldSpec{"images", DType::f32, Shape{6, 16, 16}},
                FieldSpec{"keypoints", DType::f32, Shape{2, 4, 3}}};
    if (family == "transformer") {
      FieldSpec tokens;
      tokens.name = "tokens", tokens.dtype = DType::i64, tokens.row_shape = Shape{6};
      fields = {tokens};
    }
    const std::unique_ptr<Model> model = make_model(ModelBuildContext{deck, fields, 4, nn::Precision::fp32});
    const std::string config = model->config_string();
    const deck::Deck parsed = parse_config(f, config, "test");
    const deck::Schema schema = config_schema(f);
    for (const deck::KeySpec& k : schema.keys()) {
      EXPECT_TRUE(parsed.is_set(k.name)) << family << ": '" << config << "' does not store " << k.name;
      if (k.type == deck::KeyType::Real) {  // as written: "0.1", not "0.100000" or "0.10000000000000001"
        EXPECT_EQ(parsed.entry(k.name).value, real_text(parsed.get_real(k.name))) << family << ": " << config;
      }
    }
    EXPECT_EQ(normalised_config(f, config), parsed.settings());
    EXPECT_EQ(model_from_config(family, config, 4, "test")->config_string(), config) << family;
    const std::string bad = config + (family == "mlp"      ? " activation=softsign"
                                      : family == "resnet" ? " resnet_depth=7"
                                                           : " diffusion_steps=0");
    EXPECT_NE(hpct::test::error_message([&] { parse_config(f, bad, "w.h5: config"); }).find("w.h5: config:"),
              std::string::npos)
        << family;
    EXPECT_EQ(model->generates_ensembles(), f.generates_ensembles) << family;
  }
}

// A configuration's reals in the fewest digits that read back as the same double.
TEST(Registry, RealsReadBackAsWritten) {
  EXPECT_EQ(real_text(0.1), "0.1");
  EXPECT_EQ(real_text(1e-5), "1e-05");
  EXPECT_EQ(real_text(3.0), "3");
  EXPECT_EQ(real_text(0.123456789), "0.123456789");
  for (const double v : {0.1, 1.0 / 3.0, 2.5e-7, 1e300, -0.7, 0.30000000000000004})
    EXPECT_EQ(std::strtod(real_text(v).c_str(), nullptr), v) << real_text(v);
}

// Weights files written before the schema parsed the configuration still load.
TEST(Registry, LegacyConfigurationsLoad) {
  const ModelFamily& mlp = *find_model_family("mlp");
  EXPECT_EQ(normalised_config(mlp, "d_in=4 hidden=64,32 d_out=3 activation=gelu loss=cross_entropy"),
            normalised_config(mlp, "d_in=4 d_out=3 loss=cross_entropy hidden_sizes=64,32 activation=gelu"));
  EXPECT_EQ(normalised_config(mlp, "d_in=4 hidden=8 d_out=1 activation=relu"),
            normalised_config(mlp, "d_in=4 d_out=1 loss=mse hidden_sizes=8 activation=relu"));
  // Reals as older files wrote them (%f, %.17g) normalise to the same configuration.
  const ModelFamily& transformer = *find_model_family("transformer");
  EXPECT_EQ(normalised_config(transformer, "transformer_dropout=0.100000"),
            normalised_config(transformer, "transformer_dropout=0.1"));
  EXPECT_EQ(normalised_config(transformer, "transformer_dropout=0.10000000000000001"),
            normalised_config(transformer, "transformer_dropout=0.1"));
  const ModelFamily& diffusion = *find_model_family("diffusion");
  const std::string old_text =
      "n_context=7 n_fine=256 time_dim=16 hidden=64 depth=3 steps=20 schedule=linear target=v";
  const std::unique_ptr<Model> m = model_from_config("diffusion", old_text, 8, "old.h5");
  EXPECT_EQ(m->config_string(),
            "n_context=7 n_fine=256 time_embedding_dim=16 diffusion_hidden=64 diffusion_depth=3 "
            "diffusion_steps=20 noise_schedule=linear diffusion_target=v diffusion_linear_skip=false "
            "anomaly=false diffusion_statics_linear_only=false static_columns=0");
  EXPECT_EQ(normalised_config(diffusion, old_text), normalised_config(diffusion, m->config_string()));
}

// Note [the library by default] (nn/conv_tuning.hpp): a resnet or cape deck without conv_algorithm
// runs the build's library, and so does a stored configuration without it (models/conv_keys.hpp
// declares the keys once for both). A cape weights file written with the old default stores
// conv_algorithm=gemm (every version stored the key; the first one's format is below, %.17g reals
// and no conv_deterministic) and still rebuilds with gemm convolutions, as it trained.
TEST(Registry, ConvNetsDefaultToTheLibraryAndOldFilesKeepTheirAlgorithm) {
  for (const std::string family : {"resnet", "cape"}) {
    const deck::Deck deck = hpct::test::make_deck("model " + family + "\ndata_file unused.h5\n");
    EXPECT_EQ(deck.get_string("conv_algorithm"), "library") << family;
    EXPECT_EQ(parse_config(*find_model_family(family), "", "test").get_string("conv_algorithm"), "library")
        << family;
  }
  const std::string first_version =
      "channels=3 height=16 width=16 views=2 keypoints=4 resnet_depth=18 resnet_width=4 resnet_stem=imagenet "
      "conv_algorithm=gemm cape_stages=2 cape_dim=8 cape_sigma=1 cape_heatmap_weight=2 "
      "cape_similarity_scale=0.125 cape_pck_threshold=0.20000000000000001";
  const auto algorithms = [](const std::string& config) {
    const std::unique_ptr<Model> m = model_from_config("cape", config, 4, "old.h5");
    return dynamic_cast<const cape::CapeModel&>(*m).conv_algorithms();
  };
  const std::vector<nn::ConvAlgorithm> old = algorithms(first_version);
  ASSERT_FALSE(old.empty());
  for (const nn::ConvAlgorithm a : old) EXPECT_EQ(a, nn::ConvAlgorithm::gemm);
  EXPECT_NE(model_from_config("cape", first_version, 4, "old.h5")->config_string().find("conv_algorithm=gemm "),
            std::string::npos);
  std::string unset = first_version;  // a configuration without the key: the deck's default
  unset.erase(unset.find("conv_algorithm=gemm "), std::string("conv_algorithm=gemm ").size());
  for (const nn::ConvAlgorithm a : algorithms(unset)) EXPECT_EQ(a, nn::conv_algorithm_library());
  // Note [auto in a rebuilt model] (models/conv_keys.hpp): auto, which times on training steps a
  // rebuilt model never takes, runs library's choice (it ran gemm); its configuration says auto still;
  // with conv_deterministic, auto's fixed rule.
  std::string tuned = first_version;
  tuned.replace(tuned.find("conv_algorithm=gemm"), std::string("conv_algorithm=gemm").size(),
                "conv_algorithm=auto");
  for (const nn::ConvAlgorithm a : algorithms(tuned)) EXPECT_EQ(a, nn::conv_algorithm_library());
  EXPECT_NE(model_from_config("cape", tuned, 4, "t.h5")->config_string().find("conv_algorithm=auto "),
            std::string::npos);
  for (const nn::ConvAlgorithm a : algorithms(tuned + " conv_deterministic=true"))
    EXPECT_EQ(a, nn::conv_algorithm_deterministic());
}

// Note [keys added later]: a key a stored configuration lacks is not compared, one it records is.
TEST(Registry, KeysAddedLaterTakeTheCurrentValue) {
  const ModelFamily& mlp = *find_model_family("mlp");
  const std::string now = "d_in=4 d_out=3 loss=cross_entropy hidden_sizes=8 activation=relu label_smoothing=0.1";
  EXPECT_EQ(config_difference(mlp, "d_in=4 d_out=3 loss=cross_entropy hidden_sizes=8 activation=relu", now), "");
  EXPECT_EQ(config_difference(mlp, "d_in=4 hidden=8 d_out=3 activation=relu loss=cross_entropy", now), "");
  EXPECT_EQ(config_difference(mlp, now, now), "");
  EXPECT_EQ(config_difference(mlp, "d_in=4 d_out=3 loss=cross_entropy hidden=16 label_smoothing=0.1", now),
            "hidden_sizes: '16' stored, '8' now");
  EXPECT_EQ(config_difference(mlp, "d_in=4 d_out=3 loss=cross_entropy label_smoothing=0.30", now),
            "label_smoothing: '0.3' stored, '0.1' now");
}

// Note [keys added later]: a key the family lists among keys_added_later is one whose default is not
// what the code before it did; each is one of the family's stored keys and its value from before is
// one the schema takes and differs from the default (else the entry would be a plain new key).
TEST(Registry, KeysAddedLaterAreTheFamilysKeysWithAnotherValueBefore) {
  for (const ModelFamily& f : model_families())
    for (const auto& [key, before] : f.keys_added_later) {
      const deck::KeySpec* spec = config_schema(f).find(key);
      ASSERT_NE(spec, nullptr) << f.name << ": " << key << " is not stored";
      EXPECT_EQ(parse_config(f, key + "=" + before, "test").get_string(key), before) << f.name << ": " << key;
      EXPECT_NE(spec->default_value, before) << f.name << ": " << key;
    }
  const ModelFamily& mlp = *find_model_family("mlp");
  EXPECT_EQ(mlp.keys_added_later.size(), 2u);
}

namespace {
std::string replaced(const std::string& text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from << " not in " << text;
  return at == std::string::npos ? text : text.substr(0, at) + to + text.substr(at + from.size());
}
const char* const kStandardised = " standardize_inputs=true standardize_targets=true";
const char* const kRaw = " standardize_inputs=false standardize_targets=false";
}  // namespace

// An mlp configuration stored before standardize_inputs and standardize_targets existed describes a
// model trained on the numbers as they are: a model built from today's deck (both true by default)
// cannot take it over, and the difference says what the stored run did and which deck line resumes
// it; with both false it can. Other keys the stored line lacks still take the current value.
TEST(Registry, AnOldMlpConfigurationIsNotTakenOverWithStandardisation) {
  const ModelFamily& mlp = *find_model_family("mlp");
  const std::string now = std::string("d_in=4 d_out=1 loss=mse hidden_sizes=8 activation=relu label_smoothing=0") +
                          kStandardised;
  const std::string old = "d_in=4 d_out=1 loss=mse hidden_sizes=8 activation=relu";
  EXPECT_EQ(config_difference(mlp, old, now),
            "standardize_inputs: 'true' now, standardize_targets: 'true' now; the checkpoint was written before "
            "standardize_inputs and standardize_targets existed, when the run trained as `standardize_inputs "
            "false` and `standardize_targets false`; set those lines in the deck to resume it as it ran");
  const std::string inputs_off = replaced(now, " standardize_inputs=true", " standardize_inputs=false");
  EXPECT_EQ(config_difference(mlp, old, inputs_off),
            "standardize_targets: 'true' now; the checkpoint was written before this key existed, when the run "
            "trained as `standardize_targets false`; set that line in the deck to resume it as it ran");
  // Keys the stored line has are named beside them, every one that differs, in the schema's order.
  EXPECT_EQ(config_difference(mlp, replaced(old, "hidden_sizes=8", "hidden_sizes=16") + " label_smoothing=0.2",
                              inputs_off),
            "label_smoothing: '0.2' stored, '0' now, hidden_sizes: '16' stored, '8' now, standardize_targets: "
            "'true' now; the checkpoint was written before this key existed, when the run trained as "
            "`standardize_targets false`; set that line in the deck to resume it as it ran");
  EXPECT_EQ(config_difference(mlp, old, replaced(now, kStandardised, kRaw)), "");
  EXPECT_EQ(config_difference(mlp, old + kStandardised, now), "");
  EXPECT_EQ(config_difference(mlp, old + " standardize_inputs=no", replaced(now, kStandardised, kRaw)), "");
}

// Note [keys added later]: an mlp weights file written before standardize_inputs and
// standardize_targets existed (faked: today's file with the two keys stripped from its configuration;
// its statistics datasets are left in, so that a model reading them would show) rebuilds as it
// trained: its predictions are those of the same file saying both false, not today's default's.
TEST(Registry, AnOldMlpWeightsFileRebuildsWithoutStandardisation) {
  const deck::Deck deck = hpct::test::make_deck("model mlp\ndata_file unused.h5\nhidden_sizes 5,4\nloss mse\n");
  std::unique_ptr<Model> model = make_model(ModelBuildContext{deck, 3, 2, 4, nn::Precision::fp32});
  model->store().initialize(7);
  DataStats stats;
  stats.x_mean = {1.0, -2.0, 3.0}, stats.x_std = {2.0, 0.5, 4.0};
  stats.y_mean = {10.0, -5.0}, stats.y_std = {3.0, 2.0};
  model->set_data_stats(stats);
  const std::string config = model->config_string();
  const auto write = [&](const std::string& name, const std::string& stored) {
    const std::string path = hpct::test::scratch("registry_mlp_" + name + ".h5");
    nn::write_weights(path, model->store(), {{"model", "mlp"}, {"config", stored}}, model->extra_datasets());
    return path;
  };
  const std::string old_file = write("old", replaced(config, kStandardised, ""));
  const std::string raw_file = write("raw", replaced(config, kStandardised, kRaw));
  const auto outputs = [](Model& m) {
    View2<float> x("x", 6, 3);
    auto h = Kokkos::create_mirror_view(x);
    for (int i = 0; i < 6; ++i)
      for (int j = 0; j < 3; ++j) h(i, j) = static_cast<float>(i - 2 * j) * 0.75f;
    Kokkos::deep_copy(x, h);
    const Predictions p = m.predict(prediction_batch(Tensor<float>(x), 6), PredictOptions{});
    const auto v = to_host(p.at(0).values);
    return std::vector<float>(v.data(), v.data() + v.extent(0));
  };
  const std::unique_ptr<Model> old = load_model(old_file, 8);
  EXPECT_EQ(old->config_string(), replaced(config, kStandardised, kRaw));
  EXPECT_TRUE(old->data_stats_request().empty());
  EXPECT_EQ(outputs(*old), outputs(*load_model(raw_file, 8)));
  EXPECT_NE(outputs(*old), outputs(*model)) << "the statistics change nothing: the test cannot tell";
}

// Note [fine-tuning across standardisation] (models/mlp/mlp_model.cpp): init_weights from an mlp
// file trained with other standardisation than the run's deck (an old file: the keys stripped from
// today's configuration, as above) fine-tunes as the deck says, with a note naming the lines that
// fine-tune it as it trained; only the keys the run's loss reads (cross_entropy: standardize_inputs);
// a file trained as the deck says gets no note.
TEST(Registry, InitWeightsFromAnMlpFileOfOtherStandardisationSaysSo) {
  const auto model_of = [](const std::string& lines) {
    const deck::Deck deck = hpct::test::make_deck("model mlp\ndata_file unused.h5\nhidden_sizes 4\n" + lines);
    std::unique_ptr<Model> m = make_model(ModelBuildContext{deck, 3, 1, 4, nn::Precision::fp32});
    m->store().initialize(3);
    return m;
  };
  const auto file_of = [](Model& m, const std::string& name, const std::string& from, const std::string& to) {
    const std::string path = hpct::test::scratch("registry_init_" + name + ".h5");
    nn::write_weights(path, m.store(), {{"model", "mlp"}, {"config", replaced(m.config_string(), from, to)}},
                      m.extra_datasets());
    return path;
  };
  const auto note_of = [](Model& m, const std::string& file) {
    Log::set_quiet(false);
    testing::internal::CaptureStdout();
    EXPECT_FALSE(m.fitted_state_from(file));
    const std::string out = testing::internal::GetCapturedStdout();
    Log::set_quiet(std::getenv("HPCTRAIN_TEST_VERBOSE") == nullptr);
    return out;
  };
  const std::unique_ptr<Model> mse = model_of("loss mse\n");
  const std::string old = file_of(*mse, "old", kStandardised, "");
  EXPECT_EQ(
      note_of(*mse, old),
      "note: init_weights " + old +
          " was trained with standardize_inputs false and standardize_targets "
          "false (written before the keys existed: on the numbers as they are), this run has standardize_inputs "
          "true and standardize_targets true: its parameters start on numbers scaled otherwise than they were "
          "trained on; set `standardize_inputs false` and `standardize_targets false` in the deck to fine-tune "
          "it as it trained\n");
  const std::unique_ptr<Model> raw = model_of("loss mse\nstandardize_inputs false\nstandardize_targets false\n");
  EXPECT_EQ(note_of(*raw, old), "");
  const std::string today = file_of(*mse, "today", "", "");
  EXPECT_EQ(note_of(*mse, today), "");
  EXPECT_NE(note_of(*raw, today)
                .find("was trained with standardize_inputs true and standardize_targets true, "
                      "this run has"),
            std::string::npos);
  const std::unique_ptr<Model> ce = model_of("loss cross_entropy\nnum_classes 3\n");
  const std::string ce_old = file_of(*ce, "ce_old", " standardize_inputs=true standardize_targets=false", "");
  const std::string ce_note = note_of(*ce, ce_old);
  EXPECT_NE(ce_note.find("set `standardize_inputs false` in the deck"), std::string::npos) << ce_note;
  EXPECT_EQ(ce_note.find("standardize_targets"), std::string::npos) << ce_note;
}

// Note [family tools]: apps/wxgen, wxeval, trajgen, smart_eval, posegen, cape_eval, diffgen and sample
// are one line each over their family's entry; a family without the tool is an internal error (exit
// 1 with a message), not a crash.
TEST(Registry, FamilyToolsAreReachedThroughTheirEntry) {
  for (const char* name : {"gnn", "smart", "cape", "diffusion"}) {
    const ModelFamily* f = find_model_family(name);
    ASSERT_NE(f, nullptr) << name;
    EXPECT_NE(f->generate, nullptr) << name << " has no generate tool";
    EXPECT_NE(f->evaluate, nullptr) << name << " has no evaluate tool";
  }
  char program[] = "diffgen";
  char* argv[] = {program, nullptr};
  // Without arguments diffgen prints its usage and returns 2, as the app does.
  EXPECT_EQ(run_family_tool("diffusion", FamilyTool::generate, 1, argv), 2);
  EXPECT_EQ(run_family_tool("mlp", FamilyTool::evaluate, 1, argv), 1);  // mlp has no evaluate tool
  EXPECT_EQ(run_family_tool("no_such_family", FamilyTool::generate, 1, argv), 1);
}

// The in-situ library's buffer holds rows of float32 inputs and targets and nothing else, so the
// families that run in situ (ModelFamily::runs_in_situ) are exactly those whose entry builds a model
// from such rows; every other family refuses them with a deck error naming the data it reads.
TEST(Registry, InSituFamiliesAreThoseThatBuildFromRows) {
  int in_situ = 0;
  for (const ModelFamily& f : model_families()) {
    const deck::Deck deck = hpct::test::make_deck(std::string("model ") + f.name +
                                                  "\ndata_file unused.h5\nhidden_sizes 5,4\n"
                                                  "diffusion_hidden 6\ntime_embedding_dim 4\nloss mse\n");
    const std::string error = hpct::test::error_message([&] {
      make_model(ModelBuildContext{deck, 3, 2, 4, nn::Precision::fp32});
    });
    if (f.runs_in_situ) {
      EXPECT_EQ(error, "") << f.name << " runs in situ but does not build from rows";
      ++in_situ;
    } else {
      EXPECT_NE(error.find("data_file"), std::string::npos) << f.name << " builds from rows: " << error;
    }
  }
  EXPECT_GE(in_situ, 2);  // mlp and diffusion
}
