// The model registry: every family is a deck choice with its own keys, builds from a deck, and a
// weights file written by training rebuilds the same model (load_model) for the tools.
#include <gtest/gtest.h>

#include <vector>

#include "models/registry.hpp"
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
    const deck::Deck deck = hpct::test::make_deck("model " + family + "\ndata_file unused.h5\nhidden_sizes 5,4\n"
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
