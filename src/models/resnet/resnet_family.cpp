// The resnet family's registry entry: its deck keys, how to build it, and its stored configuration
// (see models/registry.hpp).
#include "core/error.hpp"
#include "models/conv_keys.hpp"
#include "models/registry.hpp"
#include "models/resnet/resnet_model.hpp"

namespace hpct {

namespace {

void declare(deck::Schema& s) {
  s.section("model (resnet)");
  declare_resnet_shape_keys(s);  // shared with cape's stored configuration (models/conv_keys.hpp)
  s.add_bool("sync_batch_norm", false,
             "batch norm statistics over the global batch (all ranks): 1 rank == N ranks; off: per rank, as DDP");
  declare_conv_keys(s);  // shared with cape's stored configuration (models/conv_keys.hpp)
}

ResNetConfig config_from(const deck::Deck& deck) {
  ResNetConfig c;
  read_resnet_shape(deck, c);
  c.classes = static_cast<int>(deck.get_int("num_classes"));
  return c;
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const deck::Deck& deck = ctx.deck;
  const FieldSpec& inputs = ctx.field("inputs");
  const FieldSpec& targets = ctx.field("targets");
  require_float_images(deck, inputs, "the resnet reads float32 images [C, H, W] (data_format hdf5_images)");
  if (deck.get_string("loss") != "cross_entropy")
    deck.fail("loss", "the resnet classifies images: loss cross_entropy");
  if (targets.ragged || targets.width() != 1)
    deck.fail("data_file", "the resnet needs one class index per image; the data has " + targets.describe());
  ResNetConfig c = config_from(deck);
  if (c.classes < 2) deck.fail("num_classes", "cross_entropy needs num_classes >= 2");
  c.channels = static_cast<int>(inputs.row_shape.dim[0]);
  c.height = static_cast<int>(inputs.row_shape.dim[1]);
  c.width = static_cast<int>(inputs.row_shape.dim[2]);
  auto model = std::make_unique<ResNetModel>(c, ctx.capacity, deck.get_real("label_smoothing"));
  apply_conv_keys(*model, ctx);
  return model;
}

// Note [stored configuration] in models/registry.hpp: the image shape besides the deck keys.
void declare_config(deck::Schema& s) {
  declare_image_keys(s, 32);
  s.add_int("num_classes", 10, 2, 1 << 24, "classes");
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  ResNetConfig c = config_from(config);
  read_image_shape(config, c);
  auto model = std::make_unique<ResNetModel>(c, capacity);
  apply_stored_conv_keys(*model, config);
  return model;
}

}  // namespace

ModelFamily resnet_family() {
  ModelFamily f;
  f.name = "resnet";
  f.summary =
      "ResNet-18/34/50 image classifier (cross_entropy) on hdf5_images; batch norm, optionally "
      "synchronised";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  return f;
}

}  // namespace hpct
