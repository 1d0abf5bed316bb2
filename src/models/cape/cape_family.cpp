// The cape family's registry entry: its deck keys (the backbone reuses the resnet family's keys
// resnet_depth, resnet_width, resnet_stem, sync_batch_norm, conv_algorithm, conv_deterministic), building it from the
// posegen fields, and its stored configuration (see models/registry.hpp).
#include "core/error.hpp"
#include "core/log.hpp"
#include "models/cape/cape_model.hpp"
#include "models/conv_keys.hpp"
#include "models/registry.hpp"

namespace hpct::cape {

namespace {

void declare(deck::Schema& s) {
  s.section("model (cape)");
  s.add_int("cape_stages", 2, 1, 4,
            "ResNet stages in the cape backbone (the feature map is the image / 4 / 2^(stages-1) with the imagenet "
            "stem)");
  s.add_int("cape_dim", 64, 1, 4096, "channels of the cape feature map (a 1x1 projection after the stages)");
  s.add_real("cape_sigma", 1.0, 0.05, 100.0,
             "width of the Gaussian heatmaps (support pooling and target), in feature-map cells");
  s.add_real("cape_heatmap_weight", 2.0, 0.0, 1e6, "weight of the heatmap MSE next to the L1 keypoint loss");
  s.add_real("cape_similarity_scale", 0.125, 1e-6, 1e6,
             "the similarities' factor before the softmax over the query map (an inverse temperature)");
  s.add_real("cape_pck_threshold", 0.2, 1e-6, 10.0,
             "PCK: correct within this fraction of the bounding box's longer side");
}

// Keys read from a deck and from a stored configuration alike.
CapeConfig config_from(const deck::Deck& d) {
  CapeConfig c;
  read_resnet_shape(d, c.backbone);
  c.backbone.stages = static_cast<int>(d.get_int("cape_stages"));
  c.backbone.dim = static_cast<int>(d.get_int("cape_dim"));
  c.head.sigma = d.get_real("cape_sigma");
  c.head.heatmap_weight = d.get_real("cape_heatmap_weight");
  c.head.scale = d.get_real("cape_similarity_scale");
  c.pck_threshold = d.get_real("cape_pck_threshold");
  return c;
}

std::unique_ptr<Model> build(const ModelBuildContext& ctx) {
  const deck::Deck& deck = ctx.deck;
  const FieldSpec& images = ctx.field("images");
  const FieldSpec& keypoints = ctx.field("keypoints");
  require_float_images(deck, images, "model cape reads float32 images [V*C, H, W] (apps/posegen)");
  if (keypoints.dtype != DType::f32 || keypoints.ragged || keypoints.row_shape.rank != 3 ||
      keypoints.row_shape.dim[2] != 3)
    deck.fail("data_file",
              "model cape reads float32 keypoints [V, K, 3] (apps/posegen); the data has " + keypoints.describe());
  CapeConfig c = config_from(deck);
  c.views = static_cast<int>(keypoints.row_shape.dim[0]);
  c.head.keypoints = static_cast<int>(keypoints.row_shape.dim[1]);
  if (c.views < 2 || images.row_shape.dim[0] % c.views != 0)
    deck.fail("data_file", "model cape needs at least 2 views per row, the images' channels a multiple of them");
  c.backbone.channels = static_cast<int>(images.row_shape.dim[0] / c.views);
  c.backbone.height = static_cast<int>(images.row_shape.dim[1]);
  c.backbone.width = static_cast<int>(images.row_shape.dim[2]);
  c.seed = static_cast<std::uint64_t>(deck.get_int("seed"));
  if (ctx.precision != nn::Precision::fp32)
    Log::info("  model cape: precision " + std::string(nn::precision_name(ctx.precision)) +
              " keeps the loss scaling and master weights; the head computes in fp32, the convolutions as logged "
              "next");
  auto model = std::make_unique<CapeModel>(c, ctx.capacity);
  apply_conv_keys(*model, ctx);
  return model;
}

void declare_config(deck::Schema& s) {
  declare_image_keys(s, 64);
  s.add_int("views", 2, 2, 1 << 10, "views per data row");
  s.add_int("keypoints", 10, 1, 1 << 10, "keypoint slots per image");
  declare_resnet_shape_keys(s);  // as the deck declares them (models/conv_keys.hpp)
  declare_conv_keys(s);          // as the deck declares them, the default library (models/conv_keys.hpp)
}

std::unique_ptr<Model> from_config(const deck::Deck& config, int capacity) {
  CapeConfig c = config_from(config);
  read_image_shape(config, c.backbone);
  c.views = static_cast<int>(config.get_int("views"));
  c.head.keypoints = static_cast<int>(config.get_int("keypoints"));
  auto model = std::make_unique<CapeModel>(c, capacity);
  apply_stored_conv_keys(*model, config);
  return model;
}

}  // namespace

int cape_generate_main(int argc, char** argv);  // apps/posegen: models/cape/cape_generate.cpp
int cape_evaluate_main(int argc, char** argv);  // apps/cape_eval: models/cape/cape_evaluate.cpp
int cape_predict_main(int argc, char** argv);   // apps/cape_predict: models/cape/cape_predict.cpp

ModelFamily cape_family() {
  ModelFamily f;
  f.name = "cape";
  f.summary =
      "category-agnostic keypoints from 1-shot episodes (ResNet backbone, heatmap-pooled support features "
      "matched on the query map, soft-argmax) on apps/posegen data";
  f.declare_keys = declare;
  f.build = build;
  f.declare_config_keys = declare_config;
  f.from_config = from_config;
  f.generate = cape_generate_main;
  f.evaluate = cape_evaluate_main;
  f.predict = cape_predict_main;
  return f;
}

}  // namespace hpct::cape
