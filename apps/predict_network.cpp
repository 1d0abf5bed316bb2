// predict for a network weights file (any registered family, rebuilt by models/registry's
// load_model): each rank reads its contiguous block of the data file's input rows (one dataset per
// input the model reads: the gnn's state, forcing and static), runs
// Model::predict on it (models/model.hpp's predict_rows), and the ranks write one HDF5 file with
// one dataset per named output ([N, ...], rows in data order; row_output.hpp). Per-row randomness (ensembles) is keyed by the
// global row index, so the values do not depend on the rank count up to the network batches'
// rounding (--chunk).
#include "predict_network.hpp"

#include <algorithm>
#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/heartbeat.hpp"
#include "core/json_text.hpp"
#include "core/log.hpp"
#include "core/timer.hpp"
#include "data/row_output.hpp"
#include "io/hdf5.hpp"
#include "io/table_rows.hpp"
#include "models/registry.hpp"
#include "predict_finite.hpp"
#include "predict_images.hpp"
#include "predict_network_options.hpp"
#include "predict_tables.hpp"
#include "train/evaluator.hpp"
#include "train/row_weights.hpp"
#include "train/table_inputs.hpp"

namespace hpct::tools {

namespace {

template <class T>
std::string shape_text(const std::vector<T>& dims) {
  std::string s;
  for (const T d : dims) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return "[" + s + "]";
}

// A labelled table's metrics, as train's validation computes them (train/evaluator.hpp): with row
// weights (--weight-column, --weight-file) each metric's sum weighted and divided by sum w (Note
// [network row weights] in train/row_weights.cpp). Rows [0, total) of `table`.
void log_table_metrics(const NetworkOptions& o, Model& model, std::shared_ptr<const Dataset> table,
                       const std::shared_ptr<const TableDataset>& text, std::uint64_t total, const Comm& comm) {
  const bool weighted = !o.weight_column.empty() || !o.weight_file.empty();
  std::vector<float> file;
  comm.run_agreed([&] {
    if (o.weight_file.empty()) return;
    file = read_weight_file(o.weight_file, table->rows(), "--weight-file");
  });
  if (weighted) table = with_row_weights(table, o.weight_file.empty() ? text : nullptr, std::move(file));
  // The model's checks of the fields, as train's validation applies them (a table's missing numbers
  // pass where the mlp reads them: Note [mlp standardisation] in models/mlp/mlp_scaling.cpp).
  std::vector<FieldSpec> specs = table->fields();
  model.constrain_fields(specs);
  std::unique_ptr<Evaluator> eval;
  comm.run_agreed([&] {
    eval = std::make_unique<Evaluator>(row_range(table, 0, total), comm, o.predict.chunk, 5, std::move(specs));
  });
  if (weighted && total > 0 && eval->weight_total() == 0)  // Note [zero total weight] in train/row_weights.cpp
    comm.agree(where(o.weight_file.empty() ? o.data : o.weight_file, 0,
                     o.weight_file.empty() ? "--weight-column " + o.weight_column : "--weight-file") +
                   strf(": the weights of the %llu labelled rows are all 0: the weighted metrics sum w l / sum w "
                        "would be 0 / 0; give some row a weight > 0",
                        (unsigned long long)total),
               ExitCode::bad_input);
  const EvalResult r = eval->evaluate(model);
  std::string line;
  for (const auto& [spec, v] : r.metrics) line += strf(", %s %.6f", spec.name.c_str(), v);
  Log::info(strf("predict: %llu labelled rows, %s metrics%s", (unsigned long long)total,
                 weighted ? "weighted (sum w l / sum w)" : "unweighted", line.c_str()));
}

}  // namespace

int predict_network(int argc, char** argv, const Comm& comm) {
  NetworkOptions o;
  comm.run_agreed([&] { o = parse_network_options(argc, argv); });
  PredictOptions& po = o.predict;

  // The model, what it reads and what it writes with these options (unknown names are errors).
  std::unique_ptr<Model> model;
  std::vector<NamedShape> inputs, outputs;
  std::vector<std::string> datasets_in;  // the dataset each input reads
  std::vector<std::pair<std::string, long long>> facts;
  Heartbeat::beat_current("loading the model", o.weights);  // Note [the tools' guard]
  comm.run_agreed([&] {
    model = load_model(o.weights, po.chunk, o.weights_choice, &o.weight_set);
    inputs = model->predict_inputs();
    if (inputs.empty()) {
      const ModelFamily* f = find_model_family(model->family());  // Note [family tools]: its own predict
      throw Error(o.weights + ": the " + model->family() + " model has no predict" +
                      (f && f->predict
                           ? std::string("; its family's own tool predicts: apps/") + f->name + "_predict"
                           : std::string()),
                  ExitCode::bad_input);
    }
    datasets_in = input_datasets(o.inputs_dataset, inputs, model->family());
    const std::vector<NamedShape> all = model->predict_outputs(PredictOptions{po.chunk, {}, po.sampling});
    for (const std::string& name : po.outputs)
      if (std::none_of(all.begin(), all.end(), [&](const NamedShape& s) { return s.name == name; })) {
        std::string known;
        for (const NamedShape& s : all) known += (known.empty() ? "" : ", ") + s.name;
        throw Error("predict: --outputs: the " + model->family() + " model has no output '" + name + "' (it has " +
                        known + ")",
                    ExitCode::bad_input);
      }
    outputs = model->predict_outputs(po);
    facts = model->prediction_facts(po);  // checks the sampling options of models that sample
  });

  // This rank's block of rows: of one HDF5 dataset per input, or of a CSV/TSV table read as in training.
  Heartbeat::beat_current("opening data", o.data);
  io::TextFormat format{};
  TableEncoding encoding;
  std::shared_ptr<const Dataset> table;
  std::shared_ptr<const TableDataset> text;
  if (io::format_from_extension(o.data, format) || io::is_parquet(o.data)) {
    if (inputs.size() != 1)
      comm.agree(o.data + ": the " + model->family() + " model reads " + std::to_string(inputs.size()) +
                     " inputs (" + names_text(inputs) +
                     "); a CSV/TSV/LibSVM table gives one: give an HDF5 file with a dataset each",
                 ExitCode::bad_input);
    const TableRequest request{o.weights, o.data, o.weight_column, o.labelled};
    table = open_network_table(request, format, static_cast<std::uint64_t>(inputs.front().row_size()), comm,
                               encoding, text);
  }
  if (!table && (!o.weight_column.empty() || !o.weight_file.empty()))
    comm.agree("predict: " + o.data + " is not a CSV/TSV/LibSVM table: row weights weigh a table's metrics",
               ExitCode::bad_input);
  // Image files (a folder, a COCO JSON): read through the training deck (Note [predicting image files]).
  ImageRows images;  // data null: not image files
  if (!table && is_image_data(o.data)) {
    if (inputs.size() != 1)
      comm.agree(o.data + ": the " + model->family() + " model reads " + std::to_string(inputs.size()) +
                     " inputs (" + names_text(inputs) +
                     "); image files give one: give an HDF5 file with a dataset each",
                 ExitCode::bad_input);
    images = open_network_images({o.weights, o.data, o.out, o.sets}, inputs.front(), model->family(), comm);
  } else if (!o.sets.empty()) {
    comm.agree("predict: --set changes the training deck's reading of image data (a folder, a COCO .json); " +
                   o.data + " is not image data",
               ExitCode::bad_input);
  }
  const Dataset* rows_from = table ? table.get() : images.data.get();  // null: DATA.h5's datasets
  std::uint64_t total = 0;
  comm.run_agreed([&] {
    if (rows_from) {
      total = rows_from->rows();
      if (o.rows >= 0 && static_cast<std::uint64_t>(o.rows) < total) total = static_cast<std::uint64_t>(o.rows);
      return;
    }
    model->check_data_file(o.data);  // made as the model's training data was (diffusion: anomalies)
    const h5::File f = h5::File::open_read(o.data);
    for (std::size_t k = 0; k < inputs.size(); ++k) {
      const std::string& dataset = datasets_in[k];
      const std::string input = inputs.size() > 1 ? "input '" + inputs[k].name + "'" : "input";
      if (!h5::exists(f, dataset))
        throw Error(o.data + ": no dataset '" + dataset + "' (the " + model->family() + " model's " + input +
                        "; --inputs-dataset " + (inputs.size() > 1 ? inputs[k].name + "=" : std::string()) +
                        "NAME reads another)",
                    ExitCode::bad_input);
      const h5::DatasetInfo di = h5::info(f, dataset);
      std::uint64_t row = 1;
      for (std::size_t i = 1; i < di.dims.size(); ++i) row *= di.dims[i];
      if (di.dims.size() < 2 || row != static_cast<std::uint64_t>(inputs[k].row_size()))
        throw Error(o.data + ": dataset '" + dataset + "' is " + shape_text(di.dims) + "; the " + model->family() +
                        " model's " + input + " is rows of " + shape_text(inputs[k].row_shape) + " (" +
                        std::to_string(inputs[k].row_size()) + " values)",
                    ExitCode::bad_input);
      if (k > 0 && di.dims[0] != total)
        throw Error(o.data + ": dataset '" + dataset + "' has " + std::to_string(di.dims[0]) + " rows, dataset '" +
                        datasets_in[0] + "' " + std::to_string(total) + "; row i of every input is sample i",
                    ExitCode::bad_input);
      total = di.dims[0];
    }
    if (o.rows >= 0 && static_cast<std::uint64_t>(o.rows) < total) total = static_cast<std::uint64_t>(o.rows);
  });
  const auto r = static_cast<std::uint64_t>(comm.rank()), p = static_cast<std::uint64_t>(comm.size());
  const std::uint64_t first = total * r / p, count = total * (r + 1) / p - first;
  if (comm.max(count) > static_cast<std::uint64_t>(INT_MAX))
    comm.agree("predict: more than 2^31 rows per rank; use more ranks or --rows", ExitCode::bad_input);
  std::vector<std::vector<float>> x(inputs.size());
  for (std::size_t k = 0; k < inputs.size(); ++k)
    x[k].resize(count * static_cast<std::uint64_t>(inputs[k].row_size()));
  comm.run_agreed([&] {
    if (table) {
      std::vector<float> labels(count);  // read, not used: float32 values or int32 class indices
      if (count > 0) table->read_block(first, count, {{x[0].data(), nullptr}, {labels.data(), nullptr}});
      return;
    }
    if (images.data) return read_image_rows(images, inputs.front(), first, count, x[0].data());
    const h5::File f = h5::File::open_read(o.data);
    for (std::size_t k = 0; k < inputs.size() && count > 0; ++k)
      h5::read_row_range(f, datasets_in[k], first, count, static_cast<std::uint64_t>(inputs[k].row_size()),
                         x[k].data());
  });
  refuse_non_finite(*model, inputs, x, o.data, datasets_in, rows_from, first, count, comm,
                    images.data ? &images.order : nullptr);
  std::string described, read_from;
  for (const auto& [k, v] : facts) described += strf(", %s %lld", k.c_str(), v);
  for (const std::string& d : datasets_in) read_from += (read_from.empty() ? "" : ", ") + d;
  Log::info(strf("predict: %s model, %llu rows of %s, %d rank(s)%s", model->family().c_str(),
                 (unsigned long long)total, (rows_from ? o.data : read_from).c_str(), comm.size(),
                 described.c_str()));

  Stopwatch clock;
  std::vector<HostOutput> pred;
  comm.run_agreed([&] {
    std::vector<HostInput> in;
    for (std::size_t k = 0; k < inputs.size(); ++k) in.push_back({&inputs[k], x[k].data()});
    pred = predict_fields(*model, in, count, first, po);
    if (pred.size() != outputs.size()) throw Error("internal: predict's outputs differ from predict_outputs");
  });
  const double secs = comm.max(clock.seconds());
  if (table && o.labelled) log_table_metrics(o, *model, table, text, total, comm);

  // This rank's rows of every output, then one file from every rank.
  std::vector<RowDataset> datasets;
  std::string written;
  for (std::size_t k = 0; k < pred.size(); ++k) {
    std::vector<std::uint64_t> dims{total};
    for (const std::int64_t d : outputs[k].row_shape) dims.push_back(static_cast<std::uint64_t>(d));
    datasets.push_back({pred[k].name, dims, pred[k].values.data()});
    written += (written.empty() ? "" : ", ") + pred[k].name + " " + shape_text(dims);
  }
  write_row_datasets(comm, o.out, first, count, datasets, [&](const h5::File& f) {
    h5::write_attr(f, "/", "model", model->family());
    h5::write_attr(f, "/", "config", model->config_string());
    h5::write_attr(f, "/", "weights", o.weights);
    h5::write_attr(f, "/", "weight_set", o.weight_set);
    h5::write_attr(f, "/", "data", o.data);
    if (!rows_from) {  // the dataset, or with several inputs NAME=DATASET for each
      std::string given;
      for (std::size_t k = 0; k < inputs.size(); ++k)
        given += (given.empty() ? "" : ",") + (inputs.size() > 1 ? inputs[k].name + "=" : "") + datasets_in[k];
      h5::write_attr(f, "/", "inputs_dataset", given);
    }
    if (!encoding.classes.empty())  // the class names of the outputs' columns, in order
      h5::write_attr(f, "/", "classes", json_text::Json(encoding.classes).dump());
    if (model->generates_ensembles()) {
      h5::write_attr(f, "/", "method", po.sampling.method);
      h5::write_attr(f, "/", "members", static_cast<long long>(po.sampling.members));
      h5::write_attr(f, "/", "seed", static_cast<long long>(po.sampling.seed));
    }
    for (const auto& [k, v] : facts) h5::write_attr(f, "/", k, v);
  });
  if (images.data) write_image_files_list(images, o.out, total, comm);
  Log::info(strf("predict: %llu rows in %.2f s; wrote %s (%s)", (unsigned long long)total, secs, o.out.c_str(),
                 written.c_str()));
  return 0;
}

}  // namespace hpct::tools
