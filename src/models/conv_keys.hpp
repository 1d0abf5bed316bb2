// What the families of batch-normalised convolutional networks share (resnet, and cape, whose
// backbone is a ResNet's stages): the check of the image field, the ResNet shape keys, the
// convolution keys, the stored image shape, and the batch-norm and convolution settings applied to
// a model once built.
// Templates over the config and model types, which carry the same members in both families
// (depth, base_width, small_stem, channels, height, width; the models' set_reducer,
// synchronise_batch_norm, set_conv_algorithm and set_conv_precision are ConvNetModel's).
#pragma once

#include <string>

#include "deck/deck.hpp"
#include "models/registry.hpp"
#include "nn/conv_tuning.hpp"

namespace hpct {

// resnet_depth, resnet_width and resnet_stem: keys of resnet's deck section, which cape's decks read
// too, and of cape's stored configuration, declared once so that their defaults and ranges cannot part.
inline void declare_resnet_shape_keys(deck::Schema& s) {
  s.add_int("resnet_depth", 18, 18, 50, "ResNet depth: 18 or 34 (basic blocks), 50 (bottlenecks)");
  s.add_int("resnet_width", 64, 1, 4096, "channels of the first stage (torchvision: 64); stages double it");
  s.add_choice("resnet_stem", "imagenet", {"imagenet", "small"},
               "imagenet: 7x7/2 conv + 3x3/2 max pool (torchvision); small: one 3x3/1 conv, for images of 8-32 "
               "pixels");
}

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

// conv_algorithm and conv_deterministic: keys of resnet's deck section, which cape's decks read too,
// and of cape's stored configuration (Note [stored configuration] in models/registry.hpp), declared
// once so that the two defaults cannot part (Note [the library by default] in nn/conv_tuning.hpp).
// Every resnet and cape weights file stores conv_algorithm (since each family's first version: the
// deck's value, gemm by default then), so an old file runs the algorithm it names, whatever the
// default is now; the default only fills a configuration written without the key.
inline void declare_conv_keys(deck::Schema& s) {
  s.add_choice("conv_algorithm", "library", {"library", "gemm", "direct", "onednn", "cudnn", "auto"},
               "convolution algorithm: library (the build's library by a fixed rule: oneDNN on host builds, "
               "cuDNN's heuristic on CUDA builds, else gemm), gemm (im2col + BLAS, 1x1 as a plain GEMM), direct "
               "(Kokkos kernels), onednn "
               "(oneDNN, host builds that found it), cudnn (cuDNN's heuristic choice, CUDA builds that found it), "
               "or auto (each convolution times the candidates on the first steps and keeps the fastest; on CUDA "
               "builds cuDNN's benchmark mode; the log lists the choices)");
  s.add_bool("conv_deterministic", false,
             "with conv_algorithm auto: choose by a fixed rule (gemm; CUDA: cuDNN's heuristic) instead of timings, "
             "so runs repeat bitwise; cuDNN takes deterministic algorithms only");
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
// Note [auto in a rebuilt model]: auto times its candidates on training steps, and a model rebuilt
// from its file (predict, cape_eval, cape_predict, convert, an ensemble's member: load_model) takes
// none, so it stayed on gemm, auto's untimed start: cape_predict ran inputs/cape_coco.in's model
// 20x slower than on oneDNN (7 ms a box, 90% of it in im2col). It runs library's choice instead,
// what auto's timings pick on host builds with oneDNN (docs/cape.md); its configuration still says
// auto, and with conv_deterministic auto's fixed rule stays (gemm).
template <class ConvModel>
void apply_stored_conv_keys(ConvModel& model, const deck::Deck& config) {
  model.set_conv_algorithm(stored_conv_algorithm(config.get_string("conv_algorithm")),
                           config.get_bool("conv_deterministic"));
  model.untimed_auto();
}

}  // namespace hpct
