// The format-independent half of the gridded forecasting sources (netcdf, ...): the deck's
// variable keys, the samples over the time axis (gaps skipped, Note [time gaps]), the derived
// forcings and statics appended to the file's (grid_forcings.hpp) and the fields a sample fills:
// state [S, 2, N], targets [S, A, N], diff [S, N], grid [2, ny, nx], forcing [F, A, N],
// static [K, N], and with missing_data mask, mask [N] (docs/gnn.md, "Data"). A format supplies the
// layout it found and a reader of time windows of its timed variables.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "data/dataset.hpp"
#include "data/grid_time.hpp"
#include "deck/deck.hpp"
#include "deck/schema.hpp"

namespace hpct {

class GridSamples : public Dataset {
 public:
  // state_variables, forcing_variables, static_variables, derived_forcings, derived_statics, ar_steps,
  // missing_data.
  static void declare_keys(deck::Schema& s);
  // forecast_inputs: declared only by wxeval --init's opener (open_model_data), never in a user's
  // deck: the file needs to hold no complete sample, only what read_future reads (Note [future inputs]).
  static void declare_forecast_inputs_key(deck::Schema& s);
  // steps_option: declared only by wxeval's opener (open_model_data), never in a user's deck: the
  // option that set ar_steps there ("wxeval --lead-steps"), which errors name instead of ar_steps.
  static void declare_steps_option_key(deck::Schema& s);

  std::string description() const override;
  std::uint64_t rows() const override { return axis_.starts.size(); }
  std::vector<FieldSpec> fields() const override { return specs_; }
  long long read_rows(const std::vector<std::uint64_t>& rows, const std::vector<FieldBuffer>& out) const override;
  long long read_block(std::uint64_t first, std::uint64_t count,
                       const std::vector<FieldBuffer>& out) const override;

  // What a format found in the file (also what wxeval's forecast file copies: the grid, its times).
  struct Layout {
    std::size_t times = 0, ny = 0, nx = 0;
    std::vector<double> y, x;      // the coordinates (the indices where the file has none)
    bool latlon = false;           // the points' latitudes and longitudes are known (degrees)
    std::vector<double> lat, lon;  // each point's (ny nx; latlon): a projected grid's 2-D ones, or y x's
    std::vector<double> time_s;    // seconds since 1970-01-01 UTC (empty: the file has no time coordinate)
    std::vector<float> statics;    // [K][ny nx]: the file's static variables
  };
  const Layout& layout() const { return layout_; }
  double step_seconds() const { return axis_.step_s; }  // the time step (1 without a time coordinate)
  // The time index in the file of a sample's initial time t (the sample's state is [t - 1, t]).
  std::size_t initial_time_index(std::uint64_t row) const { return first_time(row) + 1; }
  // Times [t0, t0 + nt) of the state and forcing variables (deck order) as the file holds them,
  // missing values NaN: window[V][nt][ny nx]. For tools that take the fields rather than samples
  // (diffgen --grid).
  void read_times(std::size_t t0, std::size_t nt, float* window) const { reader()->read(t0, nt, window); }

  // Forecasts past the file's end (wxeval --init; grid_future.cpp, Note [future forecast]).
  std::vector<double> times() const;  // the time coordinate in seconds (the indices without one)
  // The fields of one sample with `leads` steps: fields() with ar_steps = leads.
  std::vector<FieldSpec> fields_with_leads(std::size_t leads) const;
  // One row of fields_with_leads(leads) for the initial time of index `init` (state at init - 1,
  // init), its valid times possibly past the file's end: the targets (the rollout's boundary strip)
  // are `boundary`'s states at the valid times (NaN without one, the mean at masked points); `truth`
  // [S][leads][N] the file's state where it holds the valid time (`known`[k]). Errors (exit 2) name
  // the file, the variable and the first time missing.
  void read_future(std::size_t init, std::size_t leads, const GridSamples* boundary,
                   const std::vector<FieldBuffer>& out, std::vector<float>& truth, std::vector<char>& known) const;
  // Errors unless `other` has this file's grid (size and positions).
  void check_same_grid(const GridSamples& other) const;

 protected:
  // Times [t0, t0 + nt) of the timed variables (state, then forcing, in deck order) into
  // window[V][nt][ny nx]; one per read call (a format keeps its file open in it).
  class Reader {
   public:
    virtual ~Reader() = default;
    virtual void read(std::size_t t0, std::size_t nt, float* window) = 0;
  };

  GridSamples(const std::string& file, const deck::Deck& deck);  // the deck's keys
  void finish(Layout layout);  // once the format has opened the file: the axis, derived channels, fields
  virtual std::unique_ptr<Reader> reader() const = 0;
  std::size_t first_time(std::uint64_t row) const { return axis_.starts.at(row) + back_; }  // t - 1 of a sample
  bool masked(std::size_t point) const { return masking_ && valid_[point] == 0.0f; }        // Note [missing data]

  std::string file_;
  std::vector<std::string> state_, forcing_, static_;  // the file's variables (names as the deck gives them)
  std::size_t ar_ = 1;
  Layout layout_;

 private:
  // The fields' buffers in the order fields() gives them (forcing, statics, mask only when present).
  struct Outputs {
    float *state, *targets, *diff, *grid, *forcing, *statics, *mask;
  };
  Outputs outputs(const std::vector<FieldBuffer>& out, std::size_t forcings) const;
  std::size_t time_index(double t) const;  // index of a time in the file, or times() size when absent
  void fill(Reader& in, std::size_t t0, std::uint64_t count, const std::vector<FieldBuffer>& out, std::size_t at,
            std::vector<float>& window) const;
  std::vector<char> scan_missing();  // Note [missing data]: the mask and the missing time steps

  std::vector<std::string> derived_forcing_names_, derived_static_names_;  // the deck's lists
  std::vector<std::string> derived_forcings_, derived_statics_;            // their channels
  bool day_before_ = false;  // derived forcing state_day_before (Note [the state a day before])
  bool tendency_ = false;    // derived forcing tendency_day_before: S channels after state_day_before's
  std::size_t lag_ = 0;      // its lag in steps (one day)
  std::size_t back_ = 0;     // the steps a sample reads before its t - 1 for it
  bool lead_ = false;        // derived forcing lead_time (Note [lead time]): the last channel
  TimeAxis axis_;
  std::vector<float> statics_;       // [K + derived][ny nx]
  bool masking_ = false;             // missing_data mask
  bool inputs_only_ = false;         // forecast_inputs: no complete sample needed (Note [future inputs])
  std::string steps_option_;         // steps_option: what set ar_ (empty: the deck's ar_steps)
  std::vector<float> valid_;         // [ny nx]: 1, or 0 where a point is always missing (masking_)
  std::vector<std::size_t> masked_;  // the points that are 0 in valid_
  std::vector<float> fill_;          // per timed variable: the value a masked point is given (its mean)
  std::size_t missing_times_ = 0;
  std::string steps_text() const;  // "ar_steps 3", or the option that set it ("wxeval --lead-steps 3")
  std::vector<FieldSpec> specs_;
};

}  // namespace hpct
