"""The frame of the feedback page in the course's language: its words and its template.

The template extends nbgrader's feedback page, keeping its style and the way it shows
cells, and replaces the blocks that hold English words; a cell still waiting for a hand
grade shows "pending" instead of its 0 (feedback.MarkPendingHandGrades marks it).
"""
# ruff: noqa: E501  (template lines)

from __future__ import annotations

from autograder.common.i18n import Text

# The words of the page's frame; the template shows each in the course's language.
FRAME = {
    "score": Text("Score", "得分"),
    "pending": Text("pending: graded by hand", "待人工评分"),
    "pending_total": Text(
        "{points} points still to be graded by hand", "还有 {points} 分待教师人工评分"
    ),
    "test_cell": Text("Test cell", "测试单元格"),
    "code_answer": Text("Code answer", "代码作答"),
    "written": Text("Written answer", "简答题"),
    "task": Text("Task", "任务"),
    "comment": Text("Comment", "评语"),
    "comments": Text("Comments", "评语"),
    "late": Text("Late submission penalty", "迟交扣分"),
    "late_by": Text(
        "Submitted {duration} after the due date.", "提交时间比截止时间晚 {duration}。"
    ),
    "answer": Text("Your answer", "你的作答"),
    "your_task": Text("Your task", "你的任务"),
    "grade_cell": Text("Graded cell", "评分单元格"),
    "top": Text("Top", "回到顶部"),
}

# nbgrader's feedback page with the frame's words and "pending" filled in: its style and
# the way it shows cells are kept (extends), the blocks that hold English are replaced.
TEMPLATE = """\
{%- extends 'index.html.j2' -%}

{% macro points(cell) -%}
{%- if cell.metadata.nbgrader.pending -%}
{{ resources.frame.score }}: {{ resources.frame.pending }} / {{ cell.metadata.nbgrader.points | float | round(2) }}
{%- else -%}
{{ resources.frame.score }}: {{ cell.metadata.nbgrader.score | float | round(2) }} / {{ cell.metadata.nbgrader.points | float | round(2) }}
{%- endif -%}
{%- endmacro %}

{% macro heading(cell) -%}
{%- set g = cell.metadata.nbgrader -%}
{%- if g.solution or g.task -%}<a name="comment-{{ g.grade_id }}"></a>{%- endif -%}
{%- if g.grade -%}<a name="{{ g.grade_id }}"></a>{%- endif -%}
<div class="panel-heading">
{%- if g.solution -%}
  <span class="nbgrader-label">{{ resources.frame.answer }}</span>
{%- elif g.task -%}
  <span class="nbgrader-label">{{ resources.frame.your_task }}</span>
{%- elif g.grade -%}
  <span class="nbgrader-label">{{ resources.frame.grade_cell }}: <code>{{ g.grade_id }}</code></span>
{%- endif -%}
  <span class="pull-right">
  {%- if g.grade or g.task %}{{ points(cell) }} {% endif -%}
  <a href="#top">({{ resources.frame.top }})</a></span>
</div>
{%- endmacro %}

{% macro footer(cell) -%}
{%- if (cell.metadata.nbgrader.solution or cell.metadata.nbgrader.task) and cell.metadata.nbgrader.comment -%}
<div class="panel-footer"><div>
  <b>{{ resources.frame.comments }}:</b> {{ cell.metadata.nbgrader.comment | markdown2html | strip_files_prefix }}
</div></div>
{%- endif -%}
{%- endmacro %}

{% block body %}
<body>
  <a name="top"></a>
  <div class="container">
    <div class="panel panel-default">
      <div class="panel-heading">
        <h4>{{ resources.nbgrader.notebook }} ({{ resources.frame.score }}: {{ resources.nbgrader.score | float | round(2) }} / {{ resources.nbgrader.max_score | float | round(2) }})</h4>
        {%- if resources.nbgrader.late_by %}
        <p class="late">{{ resources.frame.late_by.format(duration=resources.nbgrader.late_by) }} {{ resources.nbgrader.late_policy }}</p>
        {%- endif %}
        {%- if resources.nbgrader.pending %}
        <p class="pending">{{ resources.frame.pending_total.format(points=resources.nbgrader.pending | float | round(2)) }}</p>
        {%- endif %}
        <div id="toc">
          <ol>
          {% for cell in nb.cells %}
            {%- set g = cell.metadata.nbgrader -%}
            {% if g and g.grade and not g.solution %}
            <li><a href="#{{ g.grade_id }}">{{ resources.frame.test_cell }}</a> ({{ points(cell) }})</li>
            {% elif g and g.grade and cell.cell_type == "code" %}
            <li><a href="#{{ g.grade_id }}">{{ resources.frame.code_answer }}</a> ({{ points(cell) }})</li>
            {% elif g and g.grade and cell.cell_type == "markdown" %}
            <li><a href="#{{ g.grade_id }}">{{ resources.frame.written }}</a> ({{ points(cell) }})</li>
            {% elif g and g.task and cell.cell_type == "markdown" %}
            <li><a href="#{{ g.grade_id }}">{{ resources.frame.task }}</a> ({{ points(cell) }})</li>
            {% endif %}
            {% if g and g.comment %}
            <li><a href="#comment-{{ g.grade_id }}">{{ resources.frame.comment }}</a></li>
            {% endif %}
          {% endfor %}
          {% if resources.nbgrader.late_penalty > 0 %}
            <li class="late-penalty">{{ resources.frame.late }} ({{ resources.frame.score }}: -{{ resources.nbgrader.late_penalty | float | round(2) }})</li>
          {% endif %}
          </ol>
        </div>
      </div>
      <div class="panel-body">
        <div id="notebook" class="border-box-sizing">
          <div class="container" id="notebook-container">
            {{ super.super() }}
          </div>
        </div>
      </div>
    </div>
  </div>
</body>
{%- endblock body %}

{% block markdowncell scoped %}
<div class="cell border-box-sizing text_cell rendered">
  {{ self.empty_in_prompt() }}
  {%- set g = cell.metadata.nbgrader -%}
  {%- if g and (g.solution or g.grade or g.task) -%}
  <div class="panel panel-primary nbgrader_cell">
    {{ heading(cell) }}
    <div class="panel-body"><div class="text_cell_render border-box-sizing rendered_html">
      {{ cell.source | markdown2html | strip_files_prefix }}
    </div></div>
    {{ footer(cell) }}
  </div>
  {%- else -%}
  <div class="inner_cell"><div class="text_cell_render border-box-sizing rendered_html">
    {{ cell.source | markdown2html | strip_files_prefix }}
  </div></div>
  {%- endif -%}
</div>
{% endblock markdowncell %}

{% block input %}
  {%- set g = cell.metadata.nbgrader -%}
  {%- if g and (g.solution or g.grade) -%}
  <div class="panel panel-primary nbgrader_cell">
    {{ heading(cell) }}
    <div class="panel-body"><div class="input_area">
      {{ cell.source | highlight_code(metadata=cell.metadata) }}
    </div></div>
    {{ footer(cell) }}
  </div>
  {%- else -%}
  <div class="inner_cell"><div class="input_area">
    {{ cell.source | highlight_code(metadata=cell.metadata) }}
  </div></div>
  {%- endif -%}
{% endblock input %}
"""
