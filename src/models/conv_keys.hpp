// What the families of batch-normalised convolutional networks share (resnet, and cape, whose
// backbone is a ResNet's stages): the check of the image field, the ResNet shape keys, the stored
// image shape, and the batch-norm and convolution settings applied to a model once built.
// Templates over the config and model types, which carry the same members in both families
// (depth, base_width, small_stem, channels, height, width; set_reducer, synchronise_batch_norm,
// set_conv_algorithm, set_conv_precision).
#pragma once

#include <string>

#include "deck/deck.hpp"
#include "models/registry.hpp"
#include "nn/conv_tuning.hpp"

namespace hpct {

// resnet_depth (18, 34 or 50), resnet_width and resnet_stem into `c`, from a deck or a stored
// configuration alike.
template <class ResNetShape>
void read_resnet_shape(const deck::Deck& d, ResNetShape& c) {
  c.depth = static_cast<int>(d.get_int("resnet_depth"));
  if (c.depth != 18 && c.depth != 34 && c.depth != 50) d.fail("resnet_depth", "must be 18, 34 or 50");
  c.base_width = static_cast<int>(d.get_int("resnet_width"));
  c.small_stem = d.get_string("resnet_stem") == "small";
}

// A deck error at data_file unless `images` holds float32 images of rank 3 (a fixed [C, H, W] per
// row); `reads` says what the family reads, the message adds what the data has.
inline void require_float_images(const deck::Deck& deck, const FieldSpec& images, const std::string& reads) {
  if (images.dtype != DType::f32 || images.ragged || images.row_shape.rank != 3)
    deck.fail("data_file", reads + "; the data has " + images.describe());
}

// Note [stored configuration] (models/registry.hpp): the image shape the model was built for, square
// images of `side` pixels by default.
inline void declare_image_keys(deck::Schema& s, int side) {
  s.add_int("channels", 3, 1, 1 << 20, "image channels");
  s.add_int("height", side, 1, 1 << 20, "image height");
  s.add_int("width", side, 1, 1 << 20, "image width");
}
template <class ImageShape>
void read_image_shape(const deck::Deck& config, ImageShape& c) {
  c.channels = static_cast<int>(config.get_int("channels"));
  c.height = static_cast<int>(config.get_int("height"));
  c.width = static_cast<int>(config.get_int("width"));
}

// A model built for training: the ranks' reducer, sync_batch_norm, conv_algorithm and
// conv_deterministic of the deck, and the run's precision for the convolutions.
template <class ConvModel>
void apply_conv_keys(ConvModel& model, const ModelBuildContext& ctx) {
  model.set_reducer(ctx.allreduce_sum);
  if (ctx.deck.get_bool("sync_batch_norm")) model.synchronise_batch_norm();
  model.set_conv_algorithm(ctx.deck.get_string("conv_algorithm"), ctx.deck.get_bool("conv_deterministic"));
  model.set_conv_precision(ctx.precision);
}

// A model rebuilt from its stored configuration: conv_algorithm as this build runs it (a model
// trained with oneDNN or cuDNN loads in a build without it, by gemm) and conv_deterministic.
template <class ConvModel>
void apply_stored_conv_keys(ConvModel& model, const deck::Deck& config) {
  model.set_conv_algorithm(stored_conv_algorithm(config.get_string("conv_algorithm")),
                           config.get_bool("conv_deterministic"));
}

}  // namespace hpct
