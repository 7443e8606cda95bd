#include "tools/commands/run_workload_options.hpp"

#include <algorithm>
#include <limits>

#include "engine/strict_number.hpp"

namespace stoker::tools {
namespace {

using engine::workloads::or_list;
using engine::workloads::Workload;
using engine::workloads::WorkloadOption;

constexpr std::size_t kHelpWidth = 96, kHelpColumn = 22;

// The words of `text`, an operator standing alone ("-" in "x^n - 1", "..")
// joined to the words beside it, so that no line breaks a formula there.
std::vector<std::string> words(const std::string& text) {
  std::vector<std::string> out;
  bool join_next = false;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t end = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, end - i);
    i = end + 1;
    if (word.empty()) continue;
    const bool op = word.find_first_not_of("-+*/=<>.") == std::string::npos;
    if ((op || join_next) && !out.empty())
      out.back() += " " + word;
    else
      out.push_back(word);
    join_next = op;
  }
  return out;
}

// `text` in lines of at most kHelpWidth columns, the first after `lead`,
// the others after `indent` spaces; words longer than a line stay whole.
std::string wrap(const std::string& lead, const std::string& text, std::size_t indent) {
  std::string out = lead, line_start_pad(indent, ' ');
  std::size_t column = lead.size();
  bool first_word = true;
  for (const auto& word : words(text)) {
    if (!first_word && column + 1 + word.size() > kHelpWidth) {
      out += "\n" + line_start_pad;
      column = indent;
    } else if (!first_word) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
    first_word = false;
  }
  return out + "\n";
}

std::string names_of(const std::vector<const Workload*>& workloads) {
  std::vector<std::string> names;
  for (const auto* w : workloads) names.push_back(w->name());
  return or_list(names);
}

}  // namespace

std::string help_entry(const std::string& lead, const std::string& text) {
  std::string padded = lead;
  padded.resize(std::max(lead.size() + 1, kHelpColumn), ' ');
  return wrap(padded, text, kHelpColumn);
}

RunWorkloadOptions::RunWorkloadOptions(std::vector<const Workload*> workloads)
    : workloads_(std::move(workloads)) {}

std::vector<const Workload*> RunWorkloadOptions::takers(const std::string& name) const {
  std::vector<const Workload*> out;
  for (const auto* w : workloads_)
    if (w->option(name) != nullptr) out.push_back(w);
  return out;
}

void RunWorkloadOptions::declare(CommandLine& cl, std::string& workload) {
  std::vector<std::string> names;
  for (const auto* w : workloads_) names.push_back(w->name());
  cl.choice("--workload", workload, names);
  // Each name once, described by the first workload that takes it and
  // widened by the others.
  for (const auto* w : workloads_)
    for (const auto& o : w->options()) {
      std::vector<std::string> all_names{o.name};
      all_names.insert(all_names.end(), o.aliases.begin(), o.aliases.end());
      for (const auto& name : all_names) {
        const std::string flag = "--" + name;
        if (std::find(declared_.begin(), declared_.end(), flag) != declared_.end()) continue;
        declared_.push_back(flag);
        if (o.kind == WorkloadOption::Kind::flag) {
          cl.flag(flag, flags_[flag]);
          continue;
        }
        std::uint64_t lo = std::numeric_limits<std::uint64_t>::max(), hi = 0;
        std::vector<std::string> choices;
        for (const auto* t : takers(name)) {
          const WorkloadOption& to = *t->option(name);
          lo = std::min(lo, to.min);
          hi = std::max(hi, to.max);
          for (const auto& c : to.choices)
            if (std::find(choices.begin(), choices.end(), c) == choices.end()) choices.push_back(c);
        }
        if (o.kind == WorkloadOption::Kind::choice)
          cl.choice(flag, texts_[flag], choices);
        else if (o.kind == WorkloadOption::Kind::text)
          cl.value(flag, texts_[flag]);
        else
          cl.custom(flag, [this, flag, lo, hi](std::string_view text) {
            if (!engine::parse_integer(text, lo, hi))
              return engine::integer_problem(flag, text, lo, hi);
            texts_[flag] = text;
            return std::string();
          });
      }
      if (!o.aliases.empty()) {
        std::vector<std::string> group;
        for (const auto& name : all_names) group.push_back("--" + name);
        cl.exclusive(group);
      }
    }
  for (const auto* w : workloads_)
    for (const auto& group : w->exclusive()) {
      std::vector<std::string> flags;
      for (const auto& name : group) flags.push_back("--" + name);
      cl.exclusive(flags);
    }
}

Result<RunWorkloadOptions::Choice> RunWorkloadOptions::choose(const CommandLine& cl,
                                                              const std::string& workload) const {
  std::vector<std::string> given;  // the workloads' options on the command line, in order
  for (const auto& flag : cl.given())
    if (std::find(declared_.begin(), declared_.end(), flag) != declared_.end())
      given.push_back(flag);
  Choice choice;
  for (const auto* w : workloads_)
    if (w->name() == workload) choice.workload = w;
  for (std::size_t i = 0; choice.workload == nullptr && i < given.size(); ++i)
    if (const auto t = takers(given[i].substr(2)); t.size() == 1) choice.workload = t[0];
  if (choice.workload == nullptr) choice.workload = workloads_.front();
  for (const auto& flag : given) {
    const std::string name = flag.substr(2);
    if (choice.workload->option(name) == nullptr)
      return Error{Errc::invalid_argument, flag + " applies to --workload " +
                                               names_of(takers(name)) + ", not " +
                                               choice.workload->name()};
    choice.values.set(name, texts_.contains(flag) ? texts_.at(flag) : std::string());
  }
  if (auto e = choice.workload->check(choice.values)) return e;
  return choice;
}

std::string RunWorkloadOptions::workload_help() const {
  std::vector<std::string> names;
  for (const auto* w : workloads_)
    names.push_back(w->name() + (w == workloads_.front() ? " (default)" : ""));
  return help_entry("  --workload W", or_list(names));
}

std::string RunWorkloadOptions::partitions_help() const {
  // Workloads of one default share it: "ntt_msm_h and hpoly 4 per GPU, ...".
  std::vector<std::pair<std::string, std::vector<std::string>>> groups;
  for (const auto* w : workloads_) {
    auto g = std::find_if(groups.begin(), groups.end(),
                          [&](const auto& x) { return x.first == w->partitions_default(); });
    if (g == groups.end()) g = groups.insert(groups.end(), {w->partitions_default(), {}});
    g->second.push_back(w->name());
  }
  std::string text = "partitions in the job (default: ";
  for (std::size_t i = 0; i < groups.size(); ++i) {
    std::string names;
    for (std::size_t n = 0; n < groups[i].second.size(); ++n)
      names += (n == 0                             ? ""
                : n + 1 == groups[i].second.size() ? " and "
                                                   : ", ") +
               groups[i].second[n];
    text += (i == 0 ? "" : "; ") + names + " " + groups[i].first;
  }
  return help_entry("  --partitions N", text + ")");
}

std::string RunWorkloadOptions::verify_help() const {
  std::string text =
      "check every partition on the CPU (default on the host backend; on GPUs it costs CPU "
      "time beside the producers).";
  for (std::size_t i = 0; i < workloads_.size(); ++i)
    text += (i == 0 ? " " : "; ") + workloads_[i]->name() + ": " + workloads_[i]->verification();
  return help_entry("  --verify", text);
}

std::string RunWorkloadOptions::sections_help() const {
  std::string out;
  for (const auto* w : workloads_) {
    std::vector<std::string> implied;  // options no other workload takes
    for (const auto& o : w->options())
      if (takers(o.name).size() == 1) implied.push_back("--" + o.name);
    const std::string how = w == workloads_.front() ? " (the default)"
                            : implied.empty()       ? ""
                                                    : " (implied by " + or_list(implied) + ")";
    out += wrap("", w->name() + how + ": " + w->summary(), 2);
    for (const auto& o : w->options()) {
      std::string text = o.help;
      if (!o.default_value.empty()) text += " (default " + o.default_value + ")";
      for (const auto& alias : o.aliases)
        text += "; --" + alias + " " + o.value_name + " says the same";
      out += help_entry("  --" + o.name + (o.value_name.empty() ? "" : " " + o.value_name), text);
    }
  }
  return out;
}

}  // namespace stoker::tools
